/**
 * The IdempotencyStore contract on every layer, atomic and claimed alike: a claim runs its work
 * once and a retry gets the kept answer; another request with the key is a mismatch; a key in use
 * is in flight; an answer not kept frees the key; keys are per user; a key older than 24 h is
 * forgotten (the fixture ages it). Each test uses keys of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import type { Layer } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStore } from "../../src/services/infra/IdempotencyStore.ts"
import type { KeptAnswer, KeyClaim } from "../../src/services/infra/IdempotencyStore.ts"

export interface IdempotencyFixture<R> {
  /** The user's key was stored `hours` ago. */
  readonly age: (claim: KeyClaim, hours: number) => Effect.Effect<void, unknown, R>
  /**
   * The storage has one connection (PGlite), which an atomic request holds through its work: a
   * second request with the key then waits for the first to end and gets its answer, not a 409.
   */
  readonly oneConnection?: boolean
}

const claimOf = (fingerprint = "POST /forms #1"): KeyClaim => ({ userId: "u1", key: randomUUID(), fingerprint })
const answerOf = (value: string): KeptAnswer => ({ status: 200, headers: { "content-type": "application/json" }, body: value })
const keepSuccess = (exit: Exit.Exit<string, string>) => Exit.isSuccess(exit) ? answerOf(exit.value) : undefined

export const idempotencyStoreContract = <R, E>(name: string, store: Layer.Layer<IdempotencyStore | R, E>, fixture: IdempotencyFixture<R>) =>
  layer(store)(name, (it) => {
    for (const atomic of [true, false]) {
      const mode = atomic ? "atomic" : "claimed"

      it.effect(`${mode}: runs once; the retry gets the kept answer, the work is not run again`, () =>
        Effect.gen(function*() {
          const s = yield* IdempotencyStore
          const claim = claimOf()
          let runs = 0
          const work = Effect.sync(() => `answer ${++runs}`)
          const first = yield* s.run(claim, atomic, work, keepSuccess)
          assert.strictEqual(first._tag, "Ran")
          const again = yield* s.run(claim, atomic, work, keepSuccess)
          assert.deepStrictEqual(again, { _tag: "Replay", answer: answerOf("answer 1") })
          assert.strictEqual(runs, 1)
        }))

      it.effect(`${mode}: the key with another request is a mismatch; another user's key is their own`, () =>
        Effect.gen(function*() {
          const s = yield* IdempotencyStore
          const claim = claimOf()
          yield* s.run(claim, atomic, Effect.succeed("a"), keepSuccess)
          const other = yield* s.run({ ...claim, fingerprint: "POST /forms #2" }, atomic, Effect.succeed("b"), keepSuccess)
          assert.deepStrictEqual(other, { _tag: "Mismatch" })
          const otherUser = yield* s.run({ ...claim, userId: "u2" }, atomic, Effect.succeed("c"), keepSuccess)
          assert.strictEqual(otherUser._tag, "Ran")
        }))

      it.effect(`${mode}: while the first runs, the key is in flight; then its answer is kept`, () =>
        Effect.gen(function*() {
          const s = yield* IdempotencyStore
          const claim = claimOf()
          const started = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const work = Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Deferred.await(release), "slow"))
          const fiber = yield* Effect.forkChild(s.run(claim, atomic, work, keepSuccess))
          yield* Deferred.await(started)
          if (atomic && fixture.oneConnection === true) {
            const second = yield* Effect.forkChild(s.run(claim, atomic, Effect.succeed("fast"), keepSuccess))
            yield* Deferred.succeed(release, undefined)
            assert.deepStrictEqual(yield* Fiber.join(second), { _tag: "Replay", answer: answerOf("slow") })
          } else {
            assert.deepStrictEqual(yield* s.run(claim, atomic, Effect.succeed("fast"), keepSuccess), { _tag: "InFlight" })
            yield* Deferred.succeed(release, undefined)
          }
          assert.strictEqual((yield* Fiber.join(fiber))._tag, "Ran")
          assert.deepStrictEqual(yield* s.run(claim, atomic, Effect.succeed("fast"), keepSuccess), {
            _tag: "Replay",
            answer: answerOf("slow")
          })
        }))

      it.effect(`${mode}: an answer not kept (a failure here) frees the key for a retry`, () =>
        Effect.gen(function*() {
          const s = yield* IdempotencyStore
          const claim = claimOf()
          const failed = yield* s.run(claim, atomic, Effect.fail("unavailable"), keepSuccess)
          assert.strictEqual(failed._tag, "Ran")
          assert.deepStrictEqual(failed._tag === "Ran" && Exit.isFailure(failed.exit) ? Cause.findErrorOption(failed.exit.cause) : undefined, Option.some("unavailable"))
          const retried = yield* s.run(claim, atomic, Effect.succeed("ok"), keepSuccess)
          assert.strictEqual(retried._tag, "Ran")
          assert.deepStrictEqual(yield* s.run(claim, atomic, Effect.succeed("x"), keepSuccess), { _tag: "Replay", answer: answerOf("ok") })
        }))

      it.effect(`${mode}: a key older than 24 h is forgotten; younger, it is not`, () =>
        Effect.gen(function*() {
          const s = yield* IdempotencyStore
          const claim = claimOf()
          yield* s.run(claim, atomic, Effect.succeed("old"), keepSuccess)
          yield* fixture.age(claim, 23)
          assert.strictEqual((yield* s.run(claim, atomic, Effect.succeed("new"), keepSuccess))._tag, "Replay")
          yield* fixture.age(claim, 24.01)
          const later = yield* s.run({ ...claim, fingerprint: "another request" }, atomic, Effect.succeed("new"), keepSuccess)
          assert.strictEqual(later._tag, "Ran")
          assert.deepStrictEqual(yield* s.run({ ...claim, fingerprint: "another request" }, atomic, Effect.succeed("x"), keepSuccess), {
            _tag: "Replay",
            answer: answerOf("new")
          })
        }))
    }
  })
