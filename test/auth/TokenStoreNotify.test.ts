/**
 * Every change of TokenStoreSql that ends tokens notifies `REVOCATIONS_CHANNEL` with the family's id
 * (what other instances drop from their caches, sql/TokenStoreListener.ts), and nothing else does:
 * a revoke (by access token, by family: reuse, a second use of a code), a rotation, a platform-token
 * replacement. Nothing is sent when nothing changed (an unknown or already revoked token, a stale
 * compare-and-set, a refused refresh). No payload carries a token. PostgreSQL only (a listener needs
 * a second connection; the embedded database serves one): TEST_DATABASE_URL.
 */
import { assert, describe, layer } from "@effect/vitest"
import { PgConnection } from "@effect/sql-pg"
import { Context, Effect, Layer, Queue, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { REVOCATIONS_CHANNEL } from "../../src/layers/auth/TokenStoreListener.ts"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { newToken, TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { NewToken, TokenKind } from "../../src/services/auth/TokenStore.ts"
import { testDb } from "../utils/Db.ts"
import { platform, user } from "./TokenFixtures.ts"

const DATABASE_URL = process.env.TEST_DATABASE_URL

class Heard extends Context.Service<Heard, {
  /** The payloads heard so far (from every suite on the database), and forgets them. */
  readonly take: Effect.Effect<ReadonlyArray<string>>
  /** Whether `payload` was heard (and not taken yet). */
  readonly has: (payload: string) => Effect.Effect<boolean>
}>()("test/Heard") {}

const HeardLive = Layer.effect(Heard, Effect.gen(function*() {
  const connection = yield* PgConnection.make({ url: Redacted.make(DATABASE_URL!) })
  const queue = yield* connection.listen(REVOCATIONS_CHANNEL)
  const heard: Array<string> = []
  yield* Effect.forkScoped(Effect.forever(Effect.map(Queue.take(queue), (n) => void heard.push(n.payload))))
  return Heard.of({ take: Effect.sync(() => heard.splice(0)), has: (payload) => Effect.sync(() => heard.includes(payload)) })
}))

/** How long the listener may take to hear a notification (a loaded CI machine: seconds). */
const HEARD_WITHIN_MS = 10_000

/**
 * Once this returns, every notification committed before it started has been heard: it sends one of
 * its own (a fresh id, no family's: the other suites' instances drop nothing for it) and waits for it,
 * and PostgreSQL delivers notifications in the order their transactions committed. So what a step
 * sent is all heard, however slow the machine, and nothing of it can arrive in the next step's window;
 * and "nothing was sent" needs no guess of how long to wait for what should not come.
 */
const settled = Effect.gen(function*() {
  const heard = yield* Heard
  const sql = yield* SqlClient.SqlClient
  const marker = randomUUID()
  yield* sql`SELECT pg_notify(${REVOCATIONS_CHANNEL}, ${marker})`
  const deadline = Date.now() + HEARD_WITHIN_MS
  while (!(yield* heard.has(marker))) {
    if (Date.now() > deadline) return assert.fail(`the listener did not hear a notification within ${HEARD_WITHIN_MS} ms`)
    yield* Effect.sleep("10 millis")
  }
})

const token = (kind: TokenKind, ttlSeconds = 3600): NewToken => {
  const issuedAt = new Date()
  return { token: newToken(kind), issuedAt, expiresAt: new Date(issuedAt.getTime() + ttlSeconds * 1000) }
}
const pair = () => ({ access: token("access"), refresh: token("refresh", 86400) })

const signedIn = Effect.gen(function*() {
  const store = yield* TokenStore
  const familyId = randomUUID()
  const temporary = token("temporary", 60)
  yield* store.createFamily({ familyId, user, platform, temporary, codeChallenge: undefined })
  const first = pair()
  yield* store.issuePair(familyId, first)
  return { familyId, temporary, ...first }
})

/** The payloads naming `familyIds` that `effect` sent, all of them (other suites' are left out). */
const notified = <A, E, R>(effect: Effect.Effect<A, E, R>, familyIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const heard = yield* Heard
    // Whatever was sent before (a previous step, the sign-in) is heard and forgotten first.
    yield* settled
    yield* heard.take
    const value = yield* effect
    // Delivery is asynchronous: wait until everything `effect` committed has been heard.
    yield* settled
    const payloads = (yield* heard.take).filter((p) => familyIds.some((id) => p.includes(id)))
    return { value, payloads }
  })

describe.skipIf(DATABASE_URL === undefined)("TokenStoreSql notifies the other instances (PostgreSQL)", () =>
  layer(Layer.mergeAll(TokenStoreSql.pipe(Layer.provideMerge(testDb("postgres"))), HeardLive), { excludeTestServices: true, timeout: 60_000 })(
    "REVOCATIONS_CHANNEL",
    (it) => {
      it.effect("a revoke by access token: the family's id, once; again: nothing", () =>
        Effect.gen(function*() {
          const store = yield* TokenStore
          const s = yield* signedIn
          const first = yield* notified(store.revokeByAccess(s.access.token), [s.familyId])
          assert.isDefined(first.value)
          assert.deepStrictEqual(first.payloads, [s.familyId])
          const again = yield* notified(store.revokeByAccess(s.access.token), [s.familyId])
          assert.isUndefined(again.value)
          assert.deepStrictEqual(again.payloads, [])
          assert.deepStrictEqual((yield* notified(store.revokeByAccess(token("access").token), [s.familyId])).payloads, [])
        }))

      it.effect("a family revoked (reuse, a code used twice): its id; already revoked: nothing", () =>
        Effect.gen(function*() {
          const store = yield* TokenStore
          const s = yield* signedIn
          assert.deepStrictEqual((yield* notified(store.revokeFamily(s.familyId), [s.familyId])).payloads, [s.familyId])
          assert.deepStrictEqual((yield* notified(store.revokeFamily(s.familyId), [s.familyId])).payloads, [])
        }))

      it.effect("a rotation: the family's id (its previous access token ended); a refused one: nothing", () =>
        Effect.gen(function*() {
          const store = yield* TokenStore
          const s = yield* signedIn
          const rotated = yield* notified(store.rotateRefresh(s.refresh.token, pair()), [s.familyId])
          assert.strictEqual(rotated.value._tag, "Rotated")
          assert.deepStrictEqual(rotated.payloads, [s.familyId])
          // Presented again within the race grace: refused, nothing revoked, nothing sent.
          const raced = yield* notified(store.rotateRefresh(s.refresh.token, pair()), [s.familyId])
          assert.strictEqual(raced.value._tag, "Raced")
          assert.deepStrictEqual(raced.payloads, [])
          assert.deepStrictEqual((yield* notified(store.rotateRefresh(token("refresh").token, pair()), [s.familyId])).payloads, [])
        }))

      it.effect("platform tokens replaced: the family's id; a stale compare-and-set: nothing", () =>
        Effect.gen(function*() {
          const store = yield* TokenStore
          const s = yield* signedIn
          const next = { ...platform, accessEnc: "v1.k1.new.aaa" }
          const replaced = yield* notified(store.replacePlatformTokens(s.familyId, platform.accessEnc, next), [s.familyId])
          assert.isTrue(replaced.value)
          assert.deepStrictEqual(replaced.payloads, [s.familyId])
          const stale = yield* notified(store.replacePlatformTokens(s.familyId, platform.accessEnc, next), [s.familyId])
          assert.isFalse(stale.value)
          assert.deepStrictEqual(stale.payloads, [])
        }))

      it.effect("reads, sign-in, a code's first use and a new pair send nothing", () =>
        Effect.gen(function*() {
          const store = yield* TokenStore
          const familyId = randomUUID()
          const temporary = token("temporary", 60)
          const { payloads } = yield* notified(
            Effect.gen(function*() {
              yield* store.createFamily({ familyId, user, platform, temporary, codeChallenge: undefined })
              assert.strictEqual((yield* store.consumeTemporary(temporary.token))._tag, "Consumed")
              const p = pair()
              yield* store.issuePair(familyId, p)
              yield* store.resolveAccess(p.access.token)
              yield* store.checkAccess(p.access.token)
              yield* store.familyOf(p.refresh.token)
              yield* store.platformTokens(familyId)
            }),
            [familyId]
          )
          assert.deepStrictEqual(payloads, [])
        }))
    }
  ))
