/**
 * The push store on each database (layers/push/PushStoreSql.ts) and the backstop it drives: one
 * subscription per (source, topic) whoever asks; the secret stored encrypted, never in clear; a
 * source is pushed only while every topic is active within its lease, and is then polled every
 * 30 minutes instead of its module's interval; an ended lease is expired; EventSub message ids
 * taken once; a source that lost its feeds comes up to be unsubscribed.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { PushStoreSql } from "../../src/layers/push/PushStoreSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { PushBackstop } from "../../src/services/push/PushBackstop.ts"
import { PushSettings } from "../../src/services/push/PushSettings.ts"
import { PushStore } from "../../src/services/push/PushStore.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const Env = (kind: (typeof dbKinds)[number]) =>
  PushBackstop.layer.pipe(
    Layer.provideMerge(PushStoreSql),
    Layer.provideMerge(Layer.succeed(PushSettings, PushSettings.of({ publicUrl: "https://gw.example", leaseSeconds: 600, retrySeconds: 60, backstopSeconds: 1800 }))),
    Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
    Layer.provideMerge(testDb(kind))
  )

const T0 = Date.parse("2026-01-01T00:00:00Z")
const at = (s: number) => new Date(T0 + s * 1000)

for (const kind of dbKinds) {
  // The real clock: the test's times are wall-clock ones (Date.now()), and a TestClock left at 1970
  // under a live database pool only warned "a test is using time, but is not advancing the test clock".
  layer(Env(kind), { excludeTestServices: true, timeout: 60_000 })(`push store (${kind})`, (it) => {
    it.effect("subscriptions, secrets, leases, the backstop, message ids", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* PushStore
        const backstop = yield* PushBackstop
        const [src] = yield* sql<{ id: unknown }>`INSERT INTO feed_sources (module, identifier) VALUES ('streaming', '41000001') RETURNING id`
        const sourceId = String(src!.id)
        const feed = yield* sql<{ id: unknown }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options,
            webhook_id, webhook_token_enc, webhook_name, webhook_channel_id)
          VALUES ('200000000000000009', '301', 'streaming', '41000001', '{}', 'w', 't', 'n', 'c') RETURNING id`
        const topics = [{ module: "streaming", topic: "stream.online" as const }, { module: "streaming", topic: "stream.offline" as const }]

        const wanted = yield* store.unsubscribed(topics, 10)
        assert.deepStrictEqual(wanted.map((u) => [u.sourceId, u.topic]), [[sourceId, "stream.online"], [sourceId, "stream.offline"]])
        const secret = "a-very-secret-value-1234567890"
        const online = yield* store.create(wanted[0]!, "hook-online", Redacted.make(secret), at(60))
        assert.isTrue(Option.isSome(online))
        assert.isTrue(Option.isNone(yield* store.create(wanted[0]!, "hook-other", Redacted.make("x"), at(60))), "one per (source, topic)")
        yield* store.create(wanted[1]!, "hook-offline", Redacted.make(secret), at(60))
        assert.deepStrictEqual(yield* store.unsubscribed(topics, 10), [])

        const rows = yield* sql<{ secret_enc: string }>`SELECT secret_enc FROM push_subscriptions`
        for (const r of rows) assert.notInclude(r.secret_enc, secret, "never in clear")
        const found = yield* store.byHook("hook-online")
        assert.strictEqual(Option.isSome(found) && Redacted.value(found.value.secret), secret)

        // Pending: polled on the module's interval. Both active: the backstop. One lease over: expired, the interval again.
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "streaming" }, 300), 300)
        const ids = (yield* sql<{ id: unknown; topic: string }>`SELECT id, topic FROM push_subscriptions ORDER BY topic`).map((r) => String(r.id))
        yield* store.activate(ids[0]!, null, null)
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "streaming" }, 300), 300, "one topic is not enough")
        const soon = new Date(Date.now() + 60_000)
        yield* store.activate(ids[1]!, soon, null)
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "streaming" }, 300), 1800)
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "streaming" }, 3600), 3600, "a longer interval is kept")
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "rss" }, 300), 300)
        assert.deepStrictEqual(yield* store.expire(new Date(soon.getTime() + 1)), [sourceId])
        assert.strictEqual(yield* backstop.intervalOf({ id: sourceId, module: "streaming" }, 300), 300)

        // EventSub message ids: taken once, forgotten after the window.
        assert.isTrue(yield* store.takeMessage("hook-online", "m-1"))
        assert.isFalse(yield* store.takeMessage("hook-online", "m-1"))
        assert.isTrue(yield* store.takeMessage("hook-offline", "m-1"), "per hook")
        assert.strictEqual(yield* store.forgetMessages(new Date(Date.now() + 1000)), 2)
        assert.isTrue(yield* store.takeMessage("hook-online", "m-1"))

        // Revoked: ended once; a second revocation changes nothing.
        assert.isTrue(yield* store.end(ids[0]!, "revoked", "authorization_revoked", null))
        assert.isFalse(yield* store.end(ids[0]!, "revoked", "authorization_revoked", null))

        // The feed disabled: both rows come up as due (to be unsubscribed), without their source's feeds.
        yield* sql`INSERT INTO feed_status (feed_id, state, reason) VALUES (${feed[0]!.id}, 'disabled', 'x')`
        const due = yield* store.due(new Date(), new Date(Date.now() + 60_000), 10)
        assert.deepStrictEqual(due.map((s) => [s.topic, s.activeFeeds]).sort(), [["stream.offline", 0], ["stream.online", 0]])
      }))
  })
}
