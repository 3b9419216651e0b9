import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Feed delivery (delivery.md): the distinct sources polled, the item ids seen per source, each
 * feed's status and counters, and the delivery log whose unique (feed_id, item_id) is the "once per
 * feed" guarantee. Sources of feeds that exist already are created here, so they start polling.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per distinct (module, stored feed_identifier), however many feeds follow it.
  yield* sql`CREATE TABLE feed_sources (
    id bigserial PRIMARY KEY,
    module text NOT NULL,
    identifier text NOT NULL,
    poll_state jsonb,
    baselined_at timestamptz,
    last_poll_at timestamptz,
    next_poll_at timestamptz,
    last_success_at timestamptz,
    failing_since timestamptz,
    failures integer NOT NULL DEFAULT 0,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (module, identifier)
  )`
  yield* sql`CREATE INDEX feed_sources_next_poll ON feed_sources (next_poll_at)`
  // Kept at least 90 days; an id still served is refreshed now and then (DeliveryStoreSql).
  yield* sql`CREATE TABLE feed_seen_items (
    source_id bigint NOT NULL REFERENCES feed_sources(id) ON DELETE CASCADE,
    item_id text NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, item_id)
  )`
  yield* sql`CREATE INDEX feed_seen_items_seen_at ON feed_seen_items (seen_at)`
  // No row: active, nothing delivered or skipped yet.
  yield* sql`CREATE TABLE feed_status (
    feed_id bigint PRIMARY KEY REFERENCES feeds(id) ON DELETE CASCADE,
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'failing', 'disabled')),
    reason text,
    delivered bigint NOT NULL DEFAULT 0,
    skipped bigint NOT NULL DEFAULT 0,
    last_delivery_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE feed_deliveries (
    id bigserial PRIMARY KEY,
    feed_id bigint NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
    item_id text NOT NULL,
    title text,
    url text,
    state text NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped')),
    reason text,
    message_id text,
    body jsonb,
    webhook_id text,
    attempts integer NOT NULL DEFAULT 0,
    event_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (feed_id, item_id)
  )`
  // The post worker's queue of one webhook, oldest first; the log of one feed, newest first; retention.
  yield* sql`CREATE INDEX feed_deliveries_open ON feed_deliveries (webhook_id, event_at, id) WHERE state IN ('pending', 'sending')`
  yield* sql`CREATE INDEX feed_deliveries_feed_log ON feed_deliveries (feed_id, at DESC, id DESC)`
  yield* sql`CREATE INDEX feed_deliveries_at ON feed_deliveries (at)`
  // The worker reads the feeds of a source by (module, feed_identifier).
  yield* sql`CREATE INDEX feeds_source ON feeds (module, feed_identifier)`
  yield* sql`INSERT INTO feed_sources (module, identifier)
    SELECT DISTINCT module, feed_identifier FROM feeds ON CONFLICT DO NOTHING`
})
