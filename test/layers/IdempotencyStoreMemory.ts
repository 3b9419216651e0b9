/**
 * An in-memory IdempotencyStore for in-process API tests: keys per user in a map, ages from the
 * Clock (TestClock when present). One request per key at a time (the others: in flight); an atomic
 * request's key is stored only with an answer, as the SQL layer's transaction does; a claimed
 * one's is held while it runs. Nothing here rolls back a memory repository's writes: an answer not
 * kept only frees the key.
 */
import { Clock, Effect, Exit, Layer } from "effect"
import { KEY_TTL_HOURS } from "../../src/domain/infra/IdempotencyKey.ts"
import { IdempotencyStore } from "../../src/services/infra/IdempotencyStore.ts"
import type { KeptAnswer, KeyClaim, Outcome } from "../../src/services/infra/IdempotencyStore.ts"

interface Entry {
  readonly fingerprint: string
  readonly at: number
  readonly answer: KeptAnswer | undefined
}

const TTL_MS = KEY_TTL_HOURS * 3_600_000
const idOf = (claim: KeyClaim) => JSON.stringify([claim.userId, claim.key])

// Each store's keys, for `backdate` (the contract ages a key).
const tables = new WeakMap<object, Map<string, Entry>>()

/** Tests: the user's key of `store` (this layer's) was stored `hours` ago. */
export const backdate = (store: IdempotencyStore["Service"], claim: KeyClaim, hours: number) =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const keys = tables.get(store)
    const entry = keys?.get(idOf(claim))
    if (keys !== undefined && entry !== undefined) keys.set(idOf(claim), { ...entry, at: now - hours * 3_600_000 })
  })

export const IdempotencyStoreMemory = Layer.sync(IdempotencyStore, () => {
  const keys = new Map<string, Entry>()
  const running = new Set<string>()

  const store = IdempotencyStore.of({
    run: <A, E, R>(claim: KeyClaim, _atomic: boolean, work: Effect.Effect<A, E, R>, keep: (exit: Exit.Exit<A, E>) => KeptAnswer | undefined) =>
      Effect.gen(function*() {
        const id = idOf(claim)
        const now = yield* Clock.currentTimeMillis
        const entry = keys.get(id)
        if (entry !== undefined && now - entry.at < TTL_MS) {
          if (entry.fingerprint !== claim.fingerprint) return { _tag: "Mismatch" } as Outcome<A, E>
          if (entry.answer !== undefined) return { _tag: "Replay", answer: entry.answer } as Outcome<A, E>
        }
        if (running.has(id)) return { _tag: "InFlight" } as Outcome<A, E>
        running.add(id)
        const exit = yield* Effect.ensuring(Effect.exit(work), Effect.sync(() => running.delete(id)))
        const answer = keep(exit)
        if (answer === undefined) keys.delete(id)
        else keys.set(id, { fingerprint: claim.fingerprint, at: yield* Clock.currentTimeMillis, answer })
        return { _tag: "Ran", exit } as Outcome<A, E>
      })
  })
  tables.set(store, keys)
  return store
})
