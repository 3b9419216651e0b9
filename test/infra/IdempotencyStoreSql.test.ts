/**
 * What only the SQL IdempotencyStore promises (issue #30): an atomic request's writes and its key
 * commit together or not at all, whether its answer is not kept (a 5xx), or it is cut off before
 * it ends (the process dies, the client goes: the transaction never commits); a claim left by a
 * stopped instance is taken over after 2 minutes. PGlite, and PostgreSQL with TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { lockIdOf, makeIdempotencyStoreSql } from "../../src/layers/infra/IdempotencyStoreSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { IdempotencyStore } from "../../src/services/infra/IdempotencyStore.ts"
import type { KeyClaim } from "../../src/services/infra/IdempotencyStore.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const claimOf = (): KeyClaim => ({ userId: "u1", key: randomUUID(), fingerprint: "POST /x" })
const keepSuccess = (exit: Exit.Exit<string, unknown>) =>
  Exit.isSuccess(exit) ? { status: 200, headers: {}, body: exit.value } : undefined

/** The work's write: a row named `name` in a table of the test. */
const write = (name: string) =>
  Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO idem_writes (name) VALUES (${name})`))
const stored = (claim: KeyClaim, name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const writes = yield* sql`SELECT 1 FROM idem_writes WHERE name = ${name}`
    const keys = yield* sql`SELECT 1 FROM idempotency_keys WHERE user_id = ${claim.userId} AND key = ${claim.key}`
    return { write: writes.length, key: keys.length }
  })

for (const kind of dbKinds) {
  const store = makeIdempotencyStoreSql({ every: "1 hour" }).pipe(
    Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
    Layer.provideMerge(testDb(kind))
  )
  layer(store, { excludeTestServices: true })(`IdempotencyStoreSql on ${kind}: the key commits with the write`, (it) => {
    it.effect("kept: the write and the key; not kept: neither", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS idem_writes (name text)`
        const s = yield* IdempotencyStore
        const kept = claimOf()
        yield* s.run(kept, true, Effect.as(write(kept.key), "ok"), keepSuccess)
        assert.deepStrictEqual(yield* stored(kept, kept.key), { write: 1, key: 1 })
        const refused = claimOf()
        yield* s.run(refused, true, Effect.andThen(write(refused.key), Effect.fail("unavailable")), keepSuccess)
        assert.deepStrictEqual(yield* stored(refused, refused.key), { write: 0, key: 0 })
      }))

    // Another connection holds the key's lock (a request between its lock and its row's commit):
    // PostgreSQL only, since PGlite's one session takes its own advisory locks again.
    if (kind === "postgres") {
      it.effect("a claimed key locked by another request whose row is not there yet: in flight, the work not run", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const s = yield* IdempotencyStore
          const claim = claimOf()
          const held = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(${lockIdOf(claim)}::int8)`
            yield* Deferred.succeed(held, undefined)
            yield* Deferred.await(release)
          })))
          yield* Deferred.await(held)
          let ran = false
          const outcome = yield* s.run(claim, false, Effect.sync(() => (ran = true, "x")), keepSuccess)
          assert.deepStrictEqual(outcome, { _tag: "InFlight" })
          assert.isFalse(ran)
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          // Once the lock is gone the key is free: the request runs.
          const later = yield* s.run(claim, false, Effect.succeed("y"), keepSuccess)
          assert.strictEqual(later._tag, "Ran")
        }))
    }

    it.effect("cut off after its write, before it ends: neither the write nor the key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS idem_writes (name text)`
        const s = yield* IdempotencyStore
        const claim = claimOf()
        const written = yield* Deferred.make<void>()
        const work = Effect.andThen(write(claim.key), Effect.andThen(Deferred.succeed(written, undefined), Effect.never))
        const fiber = yield* Effect.forkChild(s.run(claim, true, work, keepSuccess))
        yield* Deferred.await(written)
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(yield* stored(claim, claim.key), { write: 0, key: 0 })
        // The retry runs (nothing was kept) and commits both.
        yield* s.run(claim, true, Effect.as(write(claim.key), "ok"), keepSuccess)
        assert.deepStrictEqual(yield* stored(claim, claim.key), { write: 1, key: 1 })
      }))

    it.effect("a statement of the work that fails (a 400 kept) leaves the transaction usable for the key", () =>
      Effect.gen(function*() {
        const s = yield* IdempotencyStore
        const claim = claimOf()
        const sql = yield* SqlClient.SqlClient
        const failing = Effect.flatMap(Effect.exit(sql`SELECT 1 / 0`), () => Effect.fail("refused"))
        const outcome = yield* s.run(claim, true, failing, (exit) => Exit.isFailure(exit) ? { status: 400, headers: {}, body: "refused" } : undefined)
        assert.strictEqual(outcome._tag, "Ran")
        const again = yield* s.run(claim, true, Effect.succeed("x"), keepSuccess)
        assert.deepStrictEqual(again, { _tag: "Replay", answer: { status: 400, headers: {}, body: "refused" } })
      }))

    it.effect("claimed: a claim left running by a stopped instance is in flight, then taken over after 2 minutes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const s = yield* IdempotencyStore
        const claim = claimOf()
        yield* sql`INSERT INTO idempotency_keys (user_id, key, fingerprint) VALUES (${claim.userId}, ${claim.key}, ${claim.fingerprint})`
        assert.deepStrictEqual(yield* s.run(claim, false, Effect.succeed("x"), keepSuccess), { _tag: "InFlight" })
        yield* sql`UPDATE idempotency_keys SET created_at = now() - interval '3 minutes' WHERE key = ${claim.key}`
        assert.strictEqual((yield* s.run(claim, false, Effect.succeed("x"), keepSuccess))._tag, "Ran")
        assert.deepStrictEqual(yield* s.run(claim, false, Effect.succeed("y"), keepSuccess), {
          _tag: "Replay",
          answer: { status: 200, headers: {}, body: "x" }
        })
      }))
  })
}
