/**
 * Deterministic in-memory AuditLog: the query semantics of the SQL layer (same parser, newest first
 * by (at, id), exact page_max). Entries are timestamped with the Effect Clock (TestClock in tests);
 * `AuditLogMemoryStore` lets a test seed entries at given times or make the storage unavailable.
 */
import { Clock, Context, Effect, Layer, Ref } from "effect"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { type AuditEntryInput, AuditLog } from "../../src/services/audit/AuditLog.ts"
import { pageMax, parseAuditQuery, type StoredEntry, toWire } from "../../src/services/audit/AuditQuery.ts"

export interface MemoryEntry extends StoredEntry {
  readonly id: number
  readonly botId: string
  readonly serverId: string
}

export class AuditLogMemoryStore extends Context.Service<AuditLogMemoryStore, {
  readonly entries: Ref.Ref<ReadonlyArray<MemoryEntry>>
  /** Appends an entry with an explicit timestamp. */
  readonly appendAt: (entry: AuditEntryInput, at: Date) => Effect.Effect<void>
  /** While true, every call fails with ServiceUnavailable. */
  readonly unavailable: Ref.Ref<boolean>
}>()("test/AuditLogMemoryStore") {}

const newestFirst = (x: MemoryEntry, y: MemoryEntry) => y.at.getTime() - x.at.getTime() || y.id - x.id

const storeLayer = Layer.effect(
  AuditLogMemoryStore,
  Effect.gen(function*() {
    const entries = yield* Ref.make<ReadonlyArray<MemoryEntry>>([])
    const unavailable = yield* Ref.make(false)
    const appendAt = (entry: AuditEntryInput, at: Date) =>
      Ref.update(entries, (all) => [...all, {
        id: all.length + 1,
        botId: entry.botId,
        serverId: entry.serverId,
        at,
        userId: entry.actor.userId,
        userName: entry.actor.userName,
        userAvatar: entry.actor.avatar,
        module: entry.module,
        itemIdentifier: entry.itemIdentifier,
        eventType: entry.eventType,
        eventString: entry.eventString
      }])
    return AuditLogMemoryStore.of({ entries, appendAt, unavailable })
  })
)

const serviceLayer = Layer.effect(
  AuditLog,
  Effect.gen(function*() {
    const store = yield* AuditLogMemoryStore
    const guard = Effect.flatMap(Ref.get(store.unavailable), (down) =>
      down ? Effect.fail(ServiceUnavailable.of("The audit log is unavailable; try again later.", 5)) : Effect.void)
    return AuditLog.of({
      append: (entry) =>
        guard.pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.flatMap((now) => store.appendAt(entry, new Date(now)))
        ),
      query: (scope, query) =>
        Effect.gen(function*() {
          const q = yield* Effect.fromResult(parseAuditQuery(query))
          yield* guard
          const all = yield* Ref.get(store.entries)
          const matching = all
            .filter((e) =>
              e.serverId === scope.serverId && e.botId === scope.botId &&
              (q.module === undefined || e.module === q.module) &&
              (q.start === undefined || e.at.getTime() >= q.start) &&
              (q.end === undefined || e.at.getTime() <= q.end)
            )
            .sort(newestFirst)
          const max = pageMax(matching.length, q.pageSize)
          const from = (q.page - 1) * q.pageSize
          return {
            logs: q.page > max ? [] : matching.slice(from, from + q.pageSize).map(toWire),
            page: q.page,
            page_size: q.pageSize,
            page_max: max
          }
        })
    })
  })
)

export const AuditLogMemory: Layer.Layer<AuditLog | AuditLogMemoryStore> = serviceLayer.pipe(Layer.provideMerge(storeLayer))
