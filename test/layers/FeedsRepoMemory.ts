/**
 * An in-memory FeedsRepo: ids count from 1. `transaction` runs one writer at a time and restores the
 * previous state when its effect fails, like a rollback. Transactions must not nest.
 * `FeedsRepoMemoryShared` also gives its table (`FeedsMemoryTable`) to other memory layers that read
 * feeds, as the SQL ones join the `feeds` table (DeliveryStoreMemory).
 */
import { Context, Effect, Layer, Option, Ref, Semaphore } from "effect"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import type { FeedRecord, FeedScope, InsertResult } from "../../src/services/feeds/FeedsRepo.ts"

interface State {
  readonly nextId: number
  readonly feeds: ReadonlyArray<FeedRecord>
  /** When each feed was stored (the `created_at` of the SQL table). */
  readonly createdAt: ReadonlyMap<string, Date>
}

/** The feeds the memory FeedsRepo holds, every scope, oldest first. */
export class FeedsMemoryTable extends Context.Service<FeedsMemoryTable, {
  readonly all: Effect.Effect<ReadonlyArray<FeedRecord & { readonly createdAt: Date }>>
}>()("test/FeedsMemoryTable") {}

const sameScope = (f: FeedScope, s: FeedScope) => f.botId === s.botId && f.serverId === s.serverId && f.module === s.module
const inScope = <M extends FeedModuleName>(s: FeedScope<M>) => (f: FeedRecord): f is FeedRecord<M> => sameScope(f, s)

const emptyState: State = { nextId: 1, feeds: [], createdAt: new Map() }

const makeOn = (state: Ref.Ref<State>) => Effect.gen(function*() {
  const lock = yield* Semaphore.make(1)
  const list = <M extends FeedModuleName>(scope: FeedScope<M>) => Effect.map(Ref.get(state), (s) => s.feeds.filter(inScope(scope)))
  return FeedsRepo.of({
    list,
    count: (scope) => Effect.map(list(scope), (l) => l.length),
    find: (scope, id) => Effect.map(list(scope), (l) => Option.fromUndefinedOr(l.find((f) => f.id === id))),
    insert: (feed, limit) =>
      Ref.modify(state, (s): readonly [InsertResult<typeof feed.module>, State] => {
        const now = new Date()
        const existing = s.feeds.filter(inScope(feed))
        if (existing.length >= limit) return [{ _tag: "LimitReached", limit } as const, s]
        if (existing.some((f) => f.feedIdentifier === feed.feedIdentifier && f.webhook.id === feed.webhook.id)) {
          return [{ _tag: "Duplicate" } as const, s]
        }
        // Read back as the SQL layer does: a webhook's forum tags are null when none were given.
        const record = { ...feed, webhook: { ...feed.webhook, forumTags: feed.webhook.forumTags ?? null }, id: String(s.nextId) }
        return [{ _tag: "Inserted", feed: record } as const, {
          nextId: s.nextId + 1,
          feeds: [...s.feeds, record],
          createdAt: new Map([...s.createdAt, [record.id, now]])
        }]
      }),
    updateOptions: (scope, id, options, displayInfo, forumTags) =>
      Ref.modify(state, (s) => {
        const current = s.feeds.filter(inScope(scope)).find((f) => f.id === id)
        if (current === undefined) return [Option.none(), s]
        const webhook = forumTags === undefined ? current.webhook : { ...current.webhook, forumTags }
        const next = { ...current, webhookOptions: options, displayInfo, webhook }
        return [Option.some(next), { ...s, feeds: s.feeds.map((f) => f.id === id ? next : f) }]
      }),
    setForumTags: (scope, id, forumTags) =>
      Ref.modify(state, (s) => {
        const current = s.feeds.filter(inScope(scope)).find((f) => f.id === id)
        if (current === undefined) return [false, s]
        const next = { ...current, webhook: { ...current.webhook, forumTags } }
        return [true, { ...s, feeds: s.feeds.map((f) => f.id === id ? next : f) }]
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

export const makeFeedsRepoMemory = Effect.flatMap(Ref.make(emptyState), makeOn)

export const FeedsRepoMemory = Layer.effect(FeedsRepo, makeFeedsRepoMemory)

/** FeedsRepoMemory and its table, one state. */
export const FeedsRepoMemoryShared = Layer.unwrap(Effect.map(Ref.make(emptyState), (state) =>
  Layer.mergeAll(
    Layer.effect(FeedsRepo, makeOn(state)),
    Layer.succeed(FeedsMemoryTable, FeedsMemoryTable.of({
      all: Effect.map(Ref.get(state), (s) => s.feeds.map((f) => ({ ...f, createdAt: s.createdAt.get(f.id)! })))
    }))
  )))
