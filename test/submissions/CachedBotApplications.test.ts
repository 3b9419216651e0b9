/**
 * The interactions endpoint's kept applications (layers/submissions/CachedBotApplications.ts): a
 * found application is kept TTL_MS; reads that arrive together for one not kept share one query (a
 * form opening on a fresh process: 100 members' first interactions made 100 queries); an unknown
 * application and a failed read are not kept; `fresh` reads the stored one again, at most once per
 * FRESH_MIN_MS.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { cachedApplications, FRESH_MIN_MS, TTL_MS } from "../../src/layers/submissions/CachedBotApplications.ts"
import type { BotApplication, BotApplications } from "../../src/services/submissions/BotApplications.ts"

const app = (publicKey: string): BotApplication => ({ botId: "100", applicationId: "900", publicKey, commandsHash: null })

/** A registry whose reads are counted, answer `stored[id]`, fail while `down`, and wait for `gate` when set. */
const registry = () => {
  const stored = new Map<string, BotApplication>()
  const state = { reads: 0, down: false, gate: undefined as Deferred.Deferred<void> | undefined }
  const apps: BotApplications["Service"] = {
    byApplication: (id) =>
      Effect.gen(function*() {
        state.reads++
        if (state.gate !== undefined) yield* Deferred.await(state.gate)
        if (state.down) return yield* Effect.fail(ServiceUnavailable.of("database down", 5))
        return stored.get(id)
      }),
    byBot: () => Effect.die("not used"),
    record: () => Effect.die("not used"),
    setCommandsHash: () => Effect.die("not used")
  }
  return { apps, stored, state }
}

describe("the interactions endpoint's kept applications", () => {
  it.effect("reads that arrive together for an application not kept make one query, and all get it", () =>
    Effect.gen(function*() {
      const r = registry()
      r.stored.set("900", app("aa"))
      r.state.gate = yield* Deferred.make<void>()
      const cached = yield* cachedApplications(r.apps)
      const fibers = yield* Effect.forEach(Array.from({ length: 50 }), () => Effect.forkChild(cached.byApplication("900")))
      yield* Effect.yieldNow
      yield* Deferred.succeed(r.state.gate, undefined)
      const got = yield* Effect.forEach(fibers, Fiber.join)
      assert.strictEqual(r.state.reads, 1)
      assert.isTrue(got.every((a) => a?.publicKey === "aa"))
    }))

  it.effect("kept TTL_MS: no query within it, one after it", () =>
    Effect.gen(function*() {
      const r = registry()
      r.stored.set("900", app("aa"))
      const cached = yield* cachedApplications(r.apps)
      yield* cached.byApplication("900")
      r.stored.set("900", app("bb"))
      yield* TestClock.adjust(TTL_MS - 1)
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "aa")
      assert.strictEqual(r.state.reads, 1)
      yield* TestClock.adjust(2)
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "bb")
      assert.strictEqual(r.state.reads, 2)
    }))

  it.effect("an unknown application is not kept: registered meanwhile, it is found at once", () =>
    Effect.gen(function*() {
      const r = registry()
      const cached = yield* cachedApplications(r.apps)
      assert.isUndefined(yield* cached.byApplication("900"))
      r.stored.set("900", app("aa"))
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "aa")
      assert.strictEqual(r.state.reads, 2)
    }))

  it.effect("a failed read is the caller's failure and is not kept: the next read queries again", () =>
    Effect.gen(function*() {
      const r = registry()
      r.stored.set("900", app("aa"))
      r.state.down = true
      const cached = yield* cachedApplications(r.apps)
      const exit = yield* Effect.exit(cached.byApplication("900"))
      assert.isTrue(Exit.isFailure(exit))
      r.state.down = false
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "aa")
      assert.strictEqual(r.state.reads, 2)
    }))

  it.effect("fresh reads the stored application within the TTL and keeps it; a removed one is forgotten", () =>
    Effect.gen(function*() {
      const r = registry()
      r.stored.set("900", app("aa"))
      const cached = yield* cachedApplications(r.apps)
      yield* cached.byApplication("900")
      r.stored.set("900", app("bb"))
      assert.strictEqual((yield* cached.fresh("900"))?.publicKey, "bb", "a key reset is read at once")
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "bb", "and kept")
      assert.strictEqual(r.state.reads, 2)
      r.stored.delete("900")
      yield* TestClock.adjust(FRESH_MIN_MS)
      assert.isUndefined(yield* cached.fresh("900"))
      assert.isUndefined(yield* cached.byApplication("900"), "a removed bot is not served from the old entry")
    }))

  it.effect("fresh reads again at most once per FRESH_MIN_MS: forged signatures cannot make a read each", () =>
    Effect.gen(function*() {
      // (Not at the clock's zero: the times are compared by their difference.)
      yield* TestClock.adjust(3_600_000)
      const r = registry()
      r.stored.set("900", app("aa"))
      const cached = yield* cachedApplications(r.apps)
      yield* cached.byApplication("900")
      assert.strictEqual((yield* cached.fresh("900"))?.publicKey, "aa")
      assert.strictEqual(r.state.reads, 2)
      r.stored.set("900", app("bb"))
      for (let i = 0; i < 20; i++) assert.strictEqual((yield* cached.fresh("900"))?.publicKey, "aa", "the kept key, not a read")
      yield* TestClock.adjust(FRESH_MIN_MS - 1)
      assert.strictEqual((yield* cached.fresh("900"))?.publicKey, "aa")
      assert.strictEqual(r.state.reads, 2)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* cached.fresh("900"))?.publicKey, "bb", "read again once FRESH_MIN_MS have passed")
      assert.strictEqual(r.state.reads, 3)
      // Another application has its own allowance.
      r.stored.set("901", { ...app("cc"), applicationId: "901", botId: "101" })
      assert.strictEqual((yield* cached.fresh("901"))?.publicKey, "cc")
      assert.strictEqual(r.state.reads, 4)
    }))

  it.effect("fresh's times are kept apart by application, at most maxEntries of them: then all go", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(3_600_000)
      const r = registry()
      for (const id of ["900", "901", "902", "903"]) r.stored.set(id, { ...app(id), applicationId: id })
      const cached = yield* cachedApplications(r.apps, TTL_MS, 3)
      yield* cached.fresh("900")
      yield* cached.fresh("901")
      assert.strictEqual(r.state.reads, 2)
      yield* cached.fresh("900")
      assert.strictEqual(r.state.reads, 2, "900's time is kept beside 901's")
      yield* cached.fresh("902")
      // A fourth application: the three times kept go, so 900 is read again at once.
      yield* cached.fresh("903")
      yield* cached.fresh("900")
      assert.strictEqual(r.state.reads, 5)
    }))

  it.effect("applications are kept apart", () =>
    Effect.gen(function*() {
      const r = registry()
      r.stored.set("900", app("aa"))
      r.stored.set("901", { ...app("cc"), applicationId: "901", botId: "101" })
      const cached = yield* cachedApplications(r.apps)
      assert.strictEqual((yield* cached.byApplication("900"))?.publicKey, "aa")
      assert.strictEqual((yield* cached.byApplication("901"))?.publicKey, "cc")
      assert.strictEqual(r.state.reads, 2)
    }))
})
