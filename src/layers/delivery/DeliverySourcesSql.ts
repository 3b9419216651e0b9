/**
 * The sources half of DeliveryStoreSql: the distinct sources (`feed_sources`), the bookkeeping of
 * their polls (state, failures, the slot a poll job covered, the next poll) and the item ids each
 * has served (`feed_seen_items`). Statements run on the ambient SqlClient, as DeliveryStoreSql.ts says.
 */
import { Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { DeliveryStore } from "../../services/delivery/DeliveryStore.ts"
import { PollState } from "../../services/sources/SourcePoller.ts"
import { chunks, decodeSources, decodeTargets, nonEmpty, toSource } from "./DeliveryRows.ts"
import { run } from "./DeliveryStoreRun.ts"

/** A seen id still served is written again once its row is this old, so retention never drops it. */
const SEEN_REFRESH_DAYS = 30

type SourceCalls = Pick<
  DeliveryStore["Service"],
  | "upsertSource"
  | "source"
  | "lockSource"
  | "pollTarget"
  | "sourceOfFeed"
  | "sourcesWithoutPoll"
  | "setNextPoll"
  | "pollSucceeded"
  | "pollUnchanged"
  | "pollFailed"
  | "resetFailures"
  | "seenAmong"
  | "markSeen"
>

export const DeliverySourcesSql: Effect.Effect<SourceCalls, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const oneSource = <E>(statement: Effect.Effect<ReadonlyArray<unknown>, E>) =>
    statement.pipe(Effect.flatMap(decodeSources), Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toSource)))

  const upsertSource = (module: FeedModuleName, identifier: string) =>
    run(
      sql`INSERT INTO feed_sources (module, identifier) VALUES (${module}, ${identifier})
        ON CONFLICT (module, identifier) DO UPDATE SET module = EXCLUDED.module
        RETURNING *`.pipe(Effect.flatMap(decodeSources), Effect.map((rows) => toSource(rows[0]!))),
      "upsertSource"
    )

  const sourcesWithoutPoll = (overdueBefore: Date, limit: number) =>
    run(
      sql`SELECT src.* FROM feed_sources src
        WHERE (src.next_poll_at IS NULL OR src.next_poll_at < ${overdueBefore})
          AND EXISTS (SELECT 1 FROM feeds f LEFT JOIN feed_status s ON s.feed_id = f.id
            WHERE f.module = src.module AND f.feed_identifier = src.identifier
              AND COALESCE(s.state, 'active') <> 'disabled')
        ORDER BY src.next_poll_at NULLS FIRST, src.id
        LIMIT ${limit}`.pipe(Effect.flatMap(decodeSources), Effect.map((rows) => rows.map(toSource))),
      "sourcesWithoutPoll"
    )

  const seenAmong = (sourceId: string, ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed(new Set<string>())
      : run(
        sql<{ item_id: string }>`SELECT item_id FROM feed_seen_items
          WHERE source_id = ${sourceId} AND item_id IN ${sql.in(ids)}`.pipe(
          Effect.map((rows) => new Set(rows.map((r) => r.item_id)))
        ),
        "seenAmong"
      )

  const markSeen = (sourceId: string, ids: ReadonlyArray<string>, at: Date) =>
    run(
      Effect.forEach(chunks(ids), (part) =>
        sql`INSERT INTO feed_seen_items ${sql.insert(nonEmpty(part.map((id) => ({ source_id: sourceId, item_id: id, seen_at: at }))))}
          ON CONFLICT (source_id, item_id) DO UPDATE SET seen_at = EXCLUDED.seen_at
          WHERE feed_seen_items.seen_at < EXCLUDED.seen_at - ${`${SEEN_REFRESH_DAYS} days`}::interval`, { discard: true }),
      "markSeen"
    )

  const encodeState = (state: PollState) => JSON.stringify(Schema.encodeSync(PollState)(state))

  /** The source and its feeds counted: what a poll reads before it asks the source. */
  const pollTarget = (sourceId: string) =>
    run(
      sql`SELECT src.*, c.active, c.failing FROM feed_sources src
        CROSS JOIN LATERAL (
          SELECT count(*) FILTER (WHERE COALESCE(s.state, 'active') <> 'disabled') AS active,
            count(*) FILTER (WHERE s.state = 'failing') AS failing
          FROM feeds f LEFT JOIN feed_status s ON s.feed_id = f.id
          WHERE f.module = src.module AND f.feed_identifier = src.identifier
        ) c
        WHERE src.id = ${sourceId}`.pipe(
        Effect.flatMap(decodeTargets),
        Effect.map((rows) =>
          Option.map(Option.fromNullishOr(rows[0]), (r) => ({ source: toSource(r), active: Number(r.active), failing: Number(r.failing) }))
        )
      ),
      "pollTarget"
    )

  return {
    upsertSource,
    source: (sourceId) => run(oneSource(sql`SELECT * FROM feed_sources WHERE id = ${sourceId}`), "source"),
    lockSource: (sourceId) => run(oneSource(sql`SELECT * FROM feed_sources WHERE id = ${sourceId} FOR UPDATE`), "lockSource"),
    pollTarget,
    sourceOfFeed: (feedId) =>
      run(
        oneSource(sql`SELECT src.* FROM feed_sources src JOIN feeds f
          ON f.module = src.module AND f.feed_identifier = src.identifier WHERE f.id = ${feedId}`),
        "sourceOfFeed"
      ),
    sourcesWithoutPoll,
    setNextPoll: (sourceId, at) =>
      run(sql`UPDATE feed_sources SET next_poll_at = ${at} WHERE id = ${sourceId}`.pipe(Effect.asVoid), "setNextPoll"),
    pollSucceeded: (sourceId, r) =>
      run(
        sql`UPDATE feed_sources SET poll_state = ${encodeState(r.state)}::jsonb,
            last_poll_at = ${r.at}, last_success_at = ${r.at}, failures = 0, failing_since = NULL, last_error = NULL,
            baselined_at = CASE WHEN ${r.baseline} THEN COALESCE(baselined_at, ${r.at}) ELSE baselined_at END,
            polled_slot = GREATEST(polled_slot, ${r.slot ?? null}::timestamptz)
          WHERE id = ${sourceId}`.pipe(Effect.asVoid),
        "pollSucceeded"
      ),
    pollUnchanged: (sourceId, r) =>
      run(
        sql`UPDATE feed_sources SET poll_state = ${encodeState(r.state)}::jsonb,
            last_poll_at = ${r.at}, last_success_at = ${r.at}, failures = 0, failing_since = NULL, last_error = NULL,
            polled_slot = GREATEST(polled_slot, ${r.slot}::timestamptz), next_poll_at = ${r.next}, successor_slot = ${r.next}
          WHERE id = ${sourceId} AND (${r.slot}::timestamptz IS NULL OR polled_slot IS NULL OR polled_slot < ${r.slot}::timestamptz)
          RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
        "pollUnchanged"
      ),
    pollFailed: (sourceId, r) =>
      run(
        sql`UPDATE feed_sources SET failures = failures + 1, failing_since = COALESCE(failing_since, ${r.at}),
            last_error = ${r.message}, last_poll_at = ${r.at}, polled_slot = GREATEST(polled_slot, ${r.slot ?? null}::timestamptz)
          WHERE id = ${sourceId} RETURNING *`.pipe(Effect.flatMap(decodeSources), Effect.map((rows) => toSource(rows[0]!))),
        "pollFailed"
      ),
    resetFailures: (sourceId) =>
      run(
        sql`UPDATE feed_sources SET failures = 0, failing_since = NULL, last_error = NULL WHERE id = ${sourceId}`.pipe(Effect.asVoid),
        "resetFailures"
      ),
    seenAmong,
    markSeen
  }
})
