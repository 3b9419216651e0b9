/**
 * Idempotency keys (http/edge/IdempotencyLive.ts): a request with a key runs once per user and key; its
 * answer is kept with the key for 24 h and sent again to a retry. The store decides, atomically
 * across instances, whether a request runs, is replayed, is refused as in flight or mismatched.
 * Layers: IdempotencyStoreSql (src/layers/infra/IdempotencyStoreSql.ts), IdempotencyStoreMemory (test/layers).
 */
import { Context } from "effect"
import type { Effect, Exit } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

/** A request's claim: whose key, and what the request was (method, path, hash of the body). */
export interface KeyClaim {
  readonly userId: string
  readonly key: string
  readonly fingerprint: string
}

/** The answer kept with a key: what a retry gets again. */
export interface KeptAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What became of a claimed request: it ran (its exit), or an earlier request with the key decided. */
export type Outcome<A, E> =
  | { readonly _tag: "Ran"; readonly exit: Exit.Exit<A, E> }
  | { readonly _tag: "Replay"; readonly answer: KeptAnswer }
  /** The key was first used for another request (method, path or body). */
  | { readonly _tag: "Mismatch" }
  /** The first request with the key is still running (here or on another instance). */
  | { readonly _tag: "InFlight" }

export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  /**
   * Runs `work` unless the claim's key (of that user, younger than 24 h) is known or in use. `keep`
   * says which answer to keep (`undefined`: none, the key stays free for a retry).
   * `atomic`: `work` runs inside the store's transaction and its answer is stored in it, so the
   * write and its key commit together or not at all (an answer not kept rolls the write back);
   * `work` must then do its I/O through the same database client. Otherwise the key is claimed
   * first (committed), and the answer stored once `work` ends (work that is not one transaction:
   * a message sent, a job queued); a claim left by a crashed instance is taken over after 2 minutes.
   */
  readonly run: <A, E, R>(
    claim: KeyClaim,
    atomic: boolean,
    work: Effect.Effect<A, E, R>,
    keep: (exit: Exit.Exit<A, E>) => KeptAnswer | undefined
  ) => Effect.Effect<Outcome<A, E>, ServiceUnavailable, R>
}>()("gateway/IdempotencyStore") {}
