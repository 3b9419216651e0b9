/**
 * PushStore on PostgreSQL / PGlite (tables of migration 0008). Secrets are stored encrypted with
 * the Cipher (associated data `push:<hook_id>:secret`, so a ciphertext moved to another row does
 * not decrypt) and decrypted only when a callback checks a signature or the hub is asked. A claim
 * of due rows is one UPDATE … RETURNING with SKIP LOCKED, so two workers never act on one row.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Cipher } from "../../services/infra/Cipher.ts"
import { PushStore } from "../../services/push/PushStore.ts"
import type { PushSubscription, PushTopic } from "../../services/push/PushStore.ts"
import { Count, Id, When } from "../delivery/DeliveryRows.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The push subscriptions")

const Topic = Schema.Literals(["websub", "stream.online", "stream.offline"])
const Row = Schema.Struct({
  id: Id,
  source_id: Id,
  topic: Topic,
  hook_id: Schema.String,
  secret_enc: Schema.String,
  state: Schema.Literals(["pending", "active", "revoked", "expired"]),
  external_id: Schema.NullOr(Schema.String),
  lease_expires_at: When,
  module: Schema.NullOr(Schema.String),
  identifier: Schema.NullOr(Schema.String),
  active_feeds: Count
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const Candidate = Schema.Struct({ source_id: Id, module: Schema.String, identifier: Schema.String, topic: Topic })
const decodeCandidates = Schema.decodeUnknownEffect(Schema.Array(Candidate))

const aad = (hookId: string) => `push:${hookId}:secret`

/** Rows with their source and its count of feeds that still deliver (then `WHERE …`). */
const SELECT_WITH_SOURCE = `
  SELECT p.id, p.source_id, p.topic, p.hook_id, p.secret_enc, p.state, p.external_id, p.lease_expires_at,
    src.module, src.identifier,
    (SELECT count(*) FROM feeds f LEFT JOIN feed_status st ON st.feed_id = f.id
      WHERE f.module = src.module AND f.feed_identifier = src.identifier AND COALESCE(st.state, 'active') <> 'disabled') AS active_feeds
  FROM push_subscriptions p LEFT JOIN feed_sources src ON src.id = p.source_id`

/** The source has a feed that still delivers. */
const DELIVERING = `EXISTS (SELECT 1 FROM feeds f LEFT JOIN feed_status st ON st.feed_id = f.id
  WHERE f.module = src.module AND f.feed_identifier = src.identifier AND COALESCE(st.state, 'active') <> 'disabled')`

export const PushStoreSql = Layer.effect(PushStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher
  const run = <A, E, R>(self: Effect.Effect<A, E | Schema.SchemaError, R>, span: string) =>
    self.pipe(Effect.catchIf(Schema.isSchemaError, (e) => Effect.die(e)), db, Effect.withSpan(`PushStore.${span}`))

  const toSubscription = (r: typeof Row.Type) =>
    Effect.map(Effect.orDie(cipher.decrypt(r.secret_enc, aad(r.hook_id))), (secret): PushSubscription => ({
      id: String(r.id),
      sourceId: String(r.source_id),
      topic: r.topic,
      hookId: r.hook_id,
      secret,
      state: r.state,
      externalId: r.external_id,
      leaseExpiresAt: r.lease_expires_at,
      source: r.module === null || r.identifier === null ? null : { module: r.module, identifier: r.identifier },
      activeFeeds: Number(r.active_feeds)
    }))
  const subscriptions = (rows: unknown) => Effect.flatMap(decodeRows(rows), (rs) => Effect.forEach(rs, toSubscription))

  return PushStore.of({
    unsubscribed: (topics, limit) =>
      run(
        Effect.map(
          Effect.forEach(topics, (t) =>
            Effect.flatMap(
              sql`SELECT src.id AS source_id, src.module, src.identifier, ${t.topic} AS topic FROM feed_sources src
                WHERE src.module = ${t.module}
                  AND NOT EXISTS (SELECT 1 FROM push_subscriptions p WHERE p.source_id = src.id AND p.topic = ${t.topic})
                  AND ${sql.literal(DELIVERING)}
                ORDER BY src.id LIMIT ${limit}`,
              decodeCandidates
            )),
          (lists) =>
            lists.flat().slice(0, limit).map((r) => ({ sourceId: String(r.source_id), module: r.module, identifier: r.identifier, topic: r.topic as PushTopic }))
        ),
        "unsubscribed"
      ),
    create: (u, hookId, secret, nextActionAt) =>
      run(
        Effect.gen(function*() {
          const enc = yield* cipher.encrypt(secret, aad(hookId))
          const inserted = yield* sql<{ id: unknown; active_feeds: unknown }>`INSERT INTO push_subscriptions (source_id, topic, hook_id, secret_enc, state, next_action_at)
            VALUES (${u.sourceId}, ${u.topic}, ${hookId}, ${enc}, 'pending', ${nextActionAt})
            ON CONFLICT (source_id, topic) DO NOTHING
            RETURNING id, (SELECT count(*) FROM feeds f LEFT JOIN feed_status st ON st.feed_id = f.id
              WHERE f.module = ${u.module} AND f.feed_identifier = ${u.identifier}
                AND COALESCE(st.state, 'active') <> 'disabled') AS active_feeds`
          const row = inserted[0]
          if (row === undefined) return Option.none<PushSubscription>()
          return Option.some<PushSubscription>({
            id: String(row.id),
            sourceId: u.sourceId,
            topic: u.topic,
            hookId,
            secret,
            state: "pending",
            externalId: null,
            leaseExpiresAt: null,
            source: { module: u.module, identifier: u.identifier },
            activeFeeds: Number(row.active_feeds)
          })
        }),
        "create"
      ),
    due: (now, retryAt, limit) =>
      run(
        Effect.gen(function*() {
          const claimed = yield* sql<{ id: unknown }>`UPDATE push_subscriptions SET next_action_at = ${retryAt}, updated_at = now()
            WHERE id IN (SELECT id FROM push_subscriptions WHERE next_action_at <= ${now}
              ORDER BY next_action_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING id`
          // Rows whose source is gone or lost its feeds are due too: they are unsubscribed.
          const idle = yield* sql<{ id: unknown }>`SELECT p.id FROM push_subscriptions p LEFT JOIN feed_sources src ON src.id = p.source_id
            WHERE src.id IS NULL OR NOT ${sql.literal(DELIVERING)} LIMIT ${limit}`
          const ids = [...new Set([...claimed, ...idle].map((r) => String(r.id)))]
          if (ids.length === 0) return []
          return yield* subscriptions(yield* sql`${sql.literal(SELECT_WITH_SOURCE)} WHERE p.id IN ${sql.in(ids)}`)
        }),
        "due"
      ),
    byHook: (hookId) =>
      run(
        Effect.map(
          Effect.flatMap(sql`${sql.literal(SELECT_WITH_SOURCE)} WHERE p.hook_id = ${hookId}`, subscriptions),
          (rows) => Option.fromNullishOr(rows[0])
        ),
        "byHook"
      ),
    activate: (id, leaseExpiresAt, nextActionAt) =>
      run(
        sql`UPDATE push_subscriptions SET state = 'active', lease_expires_at = ${leaseExpiresAt}, next_action_at = ${nextActionAt},
          reason = NULL, updated_at = now() WHERE id = ${id}`.pipe(Effect.asVoid),
        "activate"
      ),
    reopen: (id) =>
      run(
        sql`UPDATE push_subscriptions SET state = 'pending', updated_at = now()
          WHERE id = ${id} AND state IN ('revoked', 'expired')`.pipe(Effect.asVoid),
        "reopen"
      ),
    requested: (id, externalId) =>
      run(sql`UPDATE push_subscriptions SET external_id = ${externalId}, updated_at = now() WHERE id = ${id}`.pipe(Effect.asVoid), "requested"),
    end: (id, state, reason, nextActionAt) =>
      run(
        Effect.map(
          sql`UPDATE push_subscriptions SET state = ${state}, reason = ${reason}, next_action_at = ${nextActionAt}, updated_at = now()
            WHERE id = ${id} AND state IN ('pending', 'active') RETURNING id`,
          (rows) => rows.length > 0
        ),
        "end"
      ),
    expire: (now) =>
      run(
        Effect.map(
          sql<{ source_id: unknown }>`UPDATE push_subscriptions SET state = 'expired', reason = 'The lease ended before it was renewed.',
            next_action_at = COALESCE(next_action_at, ${now}), updated_at = now()
            WHERE state = 'active' AND lease_expires_at IS NOT NULL AND lease_expires_at <= ${now} RETURNING source_id`,
          (rows) => rows.map((r) => String(r.source_id))
        ),
        "expire"
      ),
    remove: (id) => run(sql`DELETE FROM push_subscriptions WHERE id = ${id}`.pipe(Effect.asVoid), "remove"),
    takeMessage: (hookId, messageId) =>
      run(
        Effect.map(
          sql`INSERT INTO push_messages (hook_id, message_id) VALUES (${hookId}, ${messageId}) ON CONFLICT DO NOTHING RETURNING 1`,
          (rows) => rows.length > 0
        ),
        "takeMessage"
      ),
    forgetMessages: (before) =>
      run(
        Effect.map(sql`DELETE FROM push_messages WHERE received_at < ${before} RETURNING 1`, (rows) => rows.length),
        "forgetMessages"
      ),
    pushed: (sourceId, now) =>
      run(
        Effect.map(
          sql<{ n: unknown; active: unknown }>`SELECT count(*) AS n,
              count(*) FILTER (WHERE state = 'active' AND (lease_expires_at IS NULL OR lease_expires_at > ${now})) AS active
            FROM push_subscriptions WHERE source_id = ${sourceId}`,
          (rows) => Number(rows[0]?.n ?? 0) > 0 && Number(rows[0]?.n) === Number(rows[0]?.active)
        ),
        "pushed"
      )
  })
}))
