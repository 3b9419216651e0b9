/**
 * An in-memory FeedsRepo: ids count from 1. `transaction` runs one writer at a time and restores the
 * previous state when its effect fails, like a rollback. Transactions must not nest.
 */
import { Effect, Layer, Option, Ref, Semaphore } from "effect"
import type { FeedModuleName } from "../../src/domain/Platform.ts"
import { FeedsRepo } from "../../src/services/FeedsRepo.ts"
import type { FeedRecord, FeedScope, InsertResult } from "../../src/services/FeedsRepo.ts"

interface State {
  readonly nextId: number
  readonly feeds: ReadonlyArray<FeedRecord>
}

const sameScope = (f: FeedScope, s: FeedScope) => f.botId === s.botId && f.serverId === s.serverId && f.module === s.module
const inScope = <M extends FeedModuleName>(s: FeedScope<M>) => (f: FeedRecord): f is FeedRecord<M> => sameScope(f, s)

export const makeFeedsRepoMemory = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ nextId: 1, feeds: [] })
  const lock = yield* Semaphore.make(1)
  const list = <M extends FeedModuleName>(scope: FeedScope<M>) => Effect.map(Ref.get(state), (s) => s.feeds.filter(inScope(scope)))
  return FeedsRepo.of({
    list,
    count: (scope) => Effect.map(list(scope), (l) => l.length),
    find: (scope, id) => Effect.map(list(scope), (l) => Option.fromUndefinedOr(l.find((f) => f.id === id))),
    insert: (feed, limit) =>
      Ref.modify(state, (s): readonly [InsertResult<typeof feed.module>, State] => {
        const existing = s.feeds.filter(inScope(feed))
        if (existing.length >= limit) return [{ _tag: "LimitReached", limit } as const, s]
        if (existing.some((f) => f.feedIdentifier === feed.feedIdentifier && f.webhook.id === feed.webhook.id)) {
          return [{ _tag: "Duplicate" } as const, s]
        }
        const record = { ...feed, id: String(s.nextId) }
        return [{ _tag: "Inserted", feed: record } as const, { nextId: s.nextId + 1, feeds: [...s.feeds, record] }]
      }),
    updateOptions: (scope, id, options, displayInfo) =>
      Ref.modify(state, (s) => {
        const current = s.feeds.filter(inScope(scope)).find((f) => f.id === id)
        if (current === undefined) return [Option.none(), s]
        const next = { ...current, webhookOptions: options, displayInfo }
        return [Option.some(next), { ...s, feeds: s.feeds.map((f) => f.id === id ? next : f) }]
      }),
    remove: (scope, id) =>
      Ref.modify(state, (s) => {
        const found = s.feeds.some((f) => f.id === id && sameScope(f, scope))
        return [found, found ? { ...s, feeds: s.feeds.filter((f) => f.id !== id) } : s]
      }),
    transaction: (self) =>
      lock.withPermits(1)(
        Effect.flatMap(Ref.get(state), (before) => Effect.onError(self, () => Ref.set(state, before)))
      )
  })
})

export const FeedsRepoMemory = Layer.effect(FeedsRepo, makeFeedsRepoMemory)
