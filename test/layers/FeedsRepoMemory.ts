/**
 * An in-memory FeedsRepo: ids count from 1. `transaction` runs one writer at a time and restores the
 * previous state when its effect fails, like a rollback. Transactions must not nest.
 */
import { Effect, Layer, Option, Ref, Semaphore } from "effect"
import { FeedsRepo } from "../../src/services/FeedsRepo.ts"
import type { FeedRecord, FeedScope, InsertResult } from "../../src/services/FeedsRepo.ts"

interface State {
  readonly nextId: number
  readonly feeds: ReadonlyArray<FeedRecord>
}

const inScope = (f: FeedRecord, s: FeedScope) => f.botId === s.botId && f.serverId === s.serverId && f.module === s.module

export const makeFeedsRepoMemory = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ nextId: 1, feeds: [] })
  const lock = yield* Semaphore.make(1)
  const list = (scope: FeedScope) => Effect.map(Ref.get(state), (s) => s.feeds.filter((f) => inScope(f, scope)))
  return FeedsRepo.of({
    list,
    count: (scope) => Effect.map(list(scope), (l) => l.length),
    find: (scope, id) => Effect.map(list(scope), (l) => Option.fromUndefinedOr(l.find((f) => f.id === id))),
    insert: (feed, limit) =>
      Ref.modify(state, (s): readonly [InsertResult, State] => {
        const existing = s.feeds.filter((f) => inScope(f, feed))
        if (existing.length >= limit) return [{ _tag: "LimitReached", limit } as const, s]
        if (existing.some((f) => f.feedIdentifier === feed.feedIdentifier && f.webhook.id === feed.webhook.id)) {
          return [{ _tag: "Duplicate" } as const, s]
        }
        const record: FeedRecord = { ...feed, id: String(s.nextId) }
        return [{ _tag: "Inserted", feed: record } as const, { nextId: s.nextId + 1, feeds: [...s.feeds, record] }]
      }),
    updateOptions: (scope, id, options, displayInfo) =>
      Ref.modify(state, (s) => {
        const current: FeedRecord | undefined = s.feeds.find((f) => f.id === id && inScope(f, scope))
        if (current === undefined) return [Option.none(), s]
        const next: FeedRecord = { ...current, webhookOptions: options, displayInfo }
        return [Option.some(next), { ...s, feeds: s.feeds.map((f) => f.id === id ? next : f) }]
      }),
    remove: (scope, id) =>
      Ref.modify(state, (s) => {
        const found = s.feeds.some((f) => f.id === id && inScope(f, scope))
        return [found, found ? { ...s, feeds: s.feeds.filter((f) => f.id !== id) } : s]
      }),
    transaction: (self) =>
      lock.withPermits(1)(
        Effect.flatMap(Ref.get(state), (before) => Effect.onError(self, () => Ref.set(state, before)))
      )
  })
})

export const FeedsRepoMemory = Layer.effect(FeedsRepo, makeFeedsRepoMemory)
