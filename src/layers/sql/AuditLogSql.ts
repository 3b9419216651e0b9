/**
 * The AuditLog on SQL. Appends are one INSERT on the ambient SqlClient (so they join the caller's
 * transaction); the triggers of migration 0004 keep `audit_counts` exact in that same transaction.
 *
 * A read never counts or skips more than AUDIT_DENSE entries, or one hour, through the index:
 * - count: whole buckets inside the time range are summed from `audit_count_shards` (over the shards); a bucket cut by
 *   `start` or `end` is split into its children while it is dense, else counted on the index;
 * - page: bucket counts are walked newest first down to one sparse bucket or hour, which is read
 *   from its end with the (server, bot[, module], at DESC, id DESC) index and an OFFSET inside it.
 */
import { Effect, Layer } from "effect"
import { type SqlError, SqlClient } from "effect/sql"
import type { AuditLogPage, EventType } from "../../domain/AuditLog.ts"
import { AuditLog } from "../../services/AuditLog.ts"
import { type ParsedAuditQuery, pageMax, parseAuditQuery, toWire } from "../../services/AuditQuery.ts"
import { AUDIT_DENSE, AUDIT_LEVEL_SECONDS } from "./AuditBuckets.ts"
import { sqlFailure } from "./SqlFailure.ts"

const LEVEL_MS = AUDIT_LEVEL_SECONDS.map((s) => s * 1000)
const TOP = 2

/** A bucket as seen by one query: `count` is how many of the query's entries it holds. */
interface Node {
  readonly level: number
  readonly n: number
  readonly from: number
  readonly to: number
  readonly c: number
  kind: "full" | "exact" | "split"
  count: number
  children: Array<Node>
}

interface Row {
  readonly id: bigint
  readonly at: Date
  readonly user_id: string
  readonly user_name: string
  readonly user_avatar: string | null
  readonly module_name: string
  readonly item_identifier: bigint | null
  readonly event_type: EventType
  readonly event_string: string
}

// An entry describes data the database already accepted, and query parameters are checked against
// fixed lists first: a value refused here would be our bug, not the client's.
const db = sqlFailure("The audit log")

export const AuditLogSql = Layer.effect(
  AuditLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const read = (scope: { readonly botId: string; readonly serverId: string }, q: ParsedAuditQuery) => {
      const lo = q.start ?? -Infinity
      const hi = q.end ?? Infinity
      const owner = [sql`server_id = ${scope.serverId}`, sql`bot_id = ${scope.botId}`]
      const entries = (from: number | undefined, to: number | undefined) =>
        sql.and([
          ...owner,
          ...(q.module === undefined ? [] : [sql`module_name = ${q.module}`]),
          ...(q.start === undefined ? [] : [sql`at >= ${new Date(q.start)}`]),
          ...(q.end === undefined ? [] : [sql`at <= ${new Date(q.end)}`]),
          ...(from === undefined ? [] : [sql`at >= ${new Date(from)}`]),
          ...(to === undefined ? [] : [sql`at < ${new Date(to)}`])
        ])
      // The module was checked against the fixed list, which names the count columns.
      const column = sql.literal(q.module ?? "n")

      /** Buckets of `level` in [a, b) (bucket numbers, each range clipped to the query), newest first. */
      const buckets = (level: number, ranges: ReadonlyArray<readonly [number, number]>) => {
        const clip = ranges
          .map(([a, b]) => [Math.max(a, Math.floor(lo / LEVEL_MS[level]!)), Math.min(b, Math.floor(hi / LEVEL_MS[level]!) + 1)] as const)
          .filter(([a, b]) => a < b)
          .map(([a, b]) =>
            sql.and([
              ...(Number.isFinite(a) ? [sql`bucket >= ${a}`] : []),
              ...(Number.isFinite(b) ? [sql`bucket < ${b}`] : [])
            ])
          )
        // One index range scan per range (an OR of ranges can turn into a scan of every bucket of the level).
        const scans = clip.map((range) =>
          sql`SELECT bucket, sum(n)::int8 AS n, sum(${column})::int8 AS c FROM audit_count_shards
            WHERE ${sql.and([...owner, sql`level = ${level}`, range])} GROUP BY bucket`
        )
        return scans.length === 0 ? Effect.succeed([]) : sql<{ bucket: bigint; n: bigint; c: bigint }>`
          SELECT * FROM (${sql.join(" UNION ALL ", false)(scans)}) AS b ORDER BY bucket DESC`.pipe(
          Effect.map((rows) =>
            rows.map((r): Node => {
              const from = Number(r.bucket) * LEVEL_MS[level]!
              const to = from + LEVEL_MS[level]!
              const full = from >= lo && to <= hi
              const c = Number(r.c)
              return { level, n: Number(r.n), from, to, c, kind: full ? "full" : "split", count: full ? c : 0, children: [] }
            })
          )
        )
      }
      const childrenOf = (node: Node) => {
        const ratio = LEVEL_MS[node.level]! / LEVEL_MS[node.level - 1]!
        const first = node.from / LEVEL_MS[node.level - 1]!
        return [first, first + ratio] as const
      }

      /** The query's buckets with exact counts: partial ones split while dense, else counted on the index. */
      const countTree = Effect.gen(function*() {
        const top = yield* buckets(TOP, [[-Infinity, Infinity]])
        const exact: Array<Node> = []
        let pending = top.filter((node) => node.kind === "split")
        while (pending.length > 0) {
          const dense = pending.filter((node) => node.level > 0 && node.n > AUDIT_DENSE)
          for (const node of pending) if (!dense.includes(node)) (node.kind = "exact", exact.push(node))
          if (dense.length === 0) break
          const level = dense[0]!.level - 1
          const children = yield* buckets(level, dense.map(childrenOf))
          for (const child of children) dense.find((p) => child.from >= p.from && child.to <= p.to)?.children.push(child)
          pending = children.filter((node) => node.kind === "split")
        }
        if (exact.length > 0) {
          const counted = yield* sql<{ i: number; n: bigint }>`${
            sql.join(" UNION ALL ", false)(exact.map((node, i) =>
              sql`SELECT ${i}::int AS i, count(*)::int8 AS n FROM audit_entries WHERE ${entries(node.from, node.to)}`
            ))
          }`
          for (const row of counted) exact[Number(row.i)]!.count = Number(row.n)
        }
        const total = (node: Node): number =>
          node.count = node.kind === "full" ? node.c : node.kind === "exact" ? node.count : node.children.reduce((s, c) => s + total(c), 0)
        top.forEach(total)
        return top
      })

      /** The bucket holding the k-th entry (newest first): read it from its end, skipping k inside. */
      const locate = (nodes: ReadonlyArray<Node>, k: number): Effect.Effect<{ k: number; to: number } | undefined, SqlError.SqlError> =>
        Effect.gen(function*() {
          for (const node of nodes) {
            if (k >= node.count) {
              k -= node.count
              continue
            }
            if (node.kind === "split") return yield* locate(node.children, k)
            if (node.kind === "exact" || node.level === 0 || node.n <= AUDIT_DENSE) return { k, to: node.to }
            return yield* locate(yield* buckets(node.level - 1, [childrenOf(node)]), k)
          }
          return undefined // counts moved under us (concurrent retention)
        })

      const fetch = (offset: number, to: number | undefined) =>
        sql<Row>`SELECT id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string
          FROM audit_entries WHERE ${entries(undefined, to)}
          ORDER BY at DESC, id DESC LIMIT ${q.pageSize} OFFSET ${offset}`

      return Effect.gen(function*() {
        const tree = yield* countTree
        const total = tree.reduce((s, node) => s + node.count, 0)
        const max = pageMax(total, q.pageSize)
        const page = (rows: ReadonlyArray<Row>): AuditLogPage => ({
          logs: rows.map((r) =>
            toWire({
              id: r.id,
              at: r.at,
              userId: r.user_id,
              userName: r.user_name,
              userAvatar: r.user_avatar,
              module: r.module_name,
              itemIdentifier: r.item_identifier,
              eventType: r.event_type,
              eventString: r.event_string
            })
          ),
          page: q.page,
          page_size: q.pageSize,
          page_max: max
        })
        if (total === 0 || q.page > max) return page([])
        const offset = (q.page - 1) * q.pageSize
        if (offset === 0) return page(yield* fetch(0, undefined))
        const at = yield* locate(tree, offset)
        if (at !== undefined) return page(yield* fetch(at.k, at.to))
        // The counts moved under us (a concurrent purge): the exact, slower path.
        yield* Effect.logWarning("audit counts and entries disagreed; reading with OFFSET", { offset })
        return page(yield* fetch(offset, undefined))
      })
    }

    return AuditLog.of({
      append: (entry) =>
        sql`INSERT INTO audit_entries
            (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
          VALUES (${entry.botId}, ${entry.serverId}, ${entry.actor.userId}, ${entry.actor.userName}, ${entry.actor.avatar},
            ${entry.module}, ${entry.itemIdentifier}, ${entry.eventType}, ${entry.eventString})`.pipe(
          Effect.asVoid,
          db,
          Effect.withSpan("AuditLog.append")
        ),
      query: (scope, query) =>
        Effect.fromResult(parseAuditQuery(query)).pipe(
          Effect.flatMap((q) => db(read(scope, q))),
          Effect.withSpan("AuditLog.query")
        )
    })
  })
)
