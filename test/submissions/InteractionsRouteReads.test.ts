/**
 * What the interactions endpoint reads before it knows a request is the platform's (forms-runtime.md
 * §1: "an unsigned request is refused before any other work"): an unsigned, malformed or stale
 * request is refused without reading the bot's key; a forged one with a current timestamp reads
 * the stored key again at most once per FRESH_MIN_MS, and never drops the kept one; the key's read
 * shares the answer's deadline (a read that does not come back in time is a 503, not a wait).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { generateKeyPairSync, sign } from "node:crypto"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { DEADLINE_MS, InteractionsRoute } from "../../src/http/submissions/InteractionsRoute.ts"
import { cachedApplications, FRESH_MIN_MS } from "../../src/layers/submissions/CachedBotApplications.ts"
import type { BotApplications } from "../../src/services/submissions/BotApplications.ts"
import { Interactions } from "../../src/services/submissions/Interactions.ts"

const APP = "123456789012345678"
const { publicKey, privateKey } = generateKeyPairSync("ed25519")
const KEY = (publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("hex")

/** The route over an application registry whose reads are counted (and may hang or fail). */
const endpoint = async (read: { hang?: boolean; down?: boolean } = {}) => {
  const state = { reads: 0 }
  const apps: BotApplications["Service"] = {
    byApplication: (id) =>
      Effect.gen(function*() {
        state.reads++
        if (read.hang === true) return yield* Effect.never
        if (read.down === true) return yield* Effect.fail(ServiceUnavailable.of("database down", 5))
        return id === APP ? { botId: "1", applicationId: APP, publicKey: KEY, commandsHash: null } : undefined
      }),
    byBot: () => Effect.die("not used"),
    record: () => Effect.die("not used"),
    setCommandsHash: () => Effect.die("not used")
  }
  const cached = await Effect.runPromise(cachedApplications(apps))
  const service = Interactions.of({
    publicKeyOf: (id, fresh = false) => Effect.map((fresh ? cached.fresh : cached.byApplication)(id), (a) => a?.publicKey),
    handle: () => Effect.succeed({ type: 4, data: { content: "ok" } })
  })
  const { handler, dispose } = HttpRouter.toWebHandler(InteractionsRoute.pipe(Layer.provide(Layer.succeed(Interactions, service))), {
    disableLogger: true
  })
  const body = JSON.stringify({ id: "5", application_id: APP, type: 1, token: "t", version: 1 })
  const post = (headers: Record<string, string>, app = APP) =>
    handler(new Request(`http://gateway/interactions/${app}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }))
  const now = () => String(Math.floor(Date.now() / 1000))
  const signed = () => {
    const t = now()
    return { "x-signature-timestamp": t, "x-signature-ed25519": sign(null, Buffer.from(t + body), privateKey).toString("hex") }
  }
  return { state, post, signed, now, dispose }
}

describe("the interactions endpoint's reads before a request is verified", () => {
  it("unsigned, malformed and stale requests are refused without reading the key", async () => {
    const e = await endpoint()
    const cases = [
      {},
      { "x-signature-timestamp": e.now() },
      { "x-signature-timestamp": e.now(), "x-signature-ed25519": "zz" },
      { "x-signature-timestamp": "soon", "x-signature-ed25519": "00".repeat(64) },
      { "x-signature-timestamp": String(Number(e.now()) - 301), "x-signature-ed25519": "00".repeat(64) },
      { "x-signature-timestamp": String(Number(e.now()) + 301), "x-signature-ed25519": "00".repeat(64) }
    ]
    for (const headers of cases) {
      assert.strictEqual((await e.post(headers)).status, 401)
      assert.strictEqual(e.state.reads, 0, JSON.stringify(headers))
    }
    assert.strictEqual(e.state.reads, 0)
    // A request of the platform is read and answered.
    const ok = await e.post(e.signed())
    assert.strictEqual(ok.status, 200)
    assert.deepStrictEqual(await ok.json(), { type: 1 })
    assert.strictEqual(e.state.reads, 1)
    await e.dispose()
  })

  it("forged signatures with a current timestamp: one read again, the kept key still answers the platform", async () => {
    const e = await endpoint()
    assert.strictEqual((await e.post(e.signed())).status, 200)
    const started = Date.now()
    for (let i = 0; i < 20; i++) {
      assert.strictEqual((await e.post({ "x-signature-timestamp": e.now(), "x-signature-ed25519": "00".repeat(64) })).status, 401)
    }
    const elapsed = Date.now() - started
    // One read again for the twenty forged, and (on a machine slow enough that they spread over more than
    // FRESH_MIN_MS, the live clock's) at most one more per FRESH_MIN_MS they took: never one each.
    const reads = e.state.reads
    assert.isAtLeast(reads, 2, "the first read, and a read again for the first forged")
    assert.isAtMost(reads, 2 + Math.floor(elapsed / FRESH_MIN_MS), `${reads} reads for twenty forged over ${elapsed} ms`)
    assert.isBelow(reads, 21, "not a read for each forged")
    assert.strictEqual((await e.post(e.signed())).status, 200)
    assert.strictEqual(e.state.reads, reads, "the kept key answered")
    await e.dispose()
  })

  it("an unknown application: 401", async () => {
    const e = await endpoint()
    assert.strictEqual((await e.post(e.signed(), "999")).status, 401)
    await e.dispose()
  })

  it("a key read that fails, or does not come back within the deadline: 503 in the envelope", async () => {
    const down = await endpoint({ down: true })
    const failed = await down.post(down.signed())
    assert.strictEqual(failed.status, 503)
    assert.strictEqual(((await failed.json()) as { errors: Array<{ code: string }> }).errors[0]!.code, "Service Unavailable")
    await down.dispose()
    const hung = await endpoint({ hang: true })
    const started = Date.now()
    const late = await hung.post(hung.signed())
    assert.strictEqual(late.status, 503)
    assert.isBelow(Date.now() - started, DEADLINE_MS + 1_000)
    await hung.dispose()
  })
})
