/**
 * The delivery engine end to end on a database (PGlite always, PostgreSQL with TEST_DATABASE_URL),
 * driven by hand one step at a time: a scripted source, the live Discord client against the sandbox
 * (its inbox is what was posted). The same engine run by workers: DeliveryWorkers.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { PollFailed } from "../../src/services/sources/SourcePoller.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import {
  auditOf,
  deleteWebhook,
  deliveriesOf,
  dropSchemaAtEnd,
  fault,
  inbox,
  insertFeed,
  newWebhook,
  processLayer,
  scriptedPoller,
  world
} from "./DeliveryFixtures.ts"
import { baselinedWith, bodyOf, item, minutesAgo, newSource } from "./DeliveryEngineFixtures.ts"

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const engine = processLayer({ pgbossSchema: pgboss, poller })
  const baselined = baselinedWith(script)

  // The failures these tests provoke are logged (a 429, a 500, a disabled feed): kept, and checked where they are the behaviour.
  layer(Layer.provideMerge(engine, base).pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true, timeout: "180 seconds" })(
    `delivery, step by step, on ${kind}`,
    (it) => {
      it.effect("baseline posts nothing; a new item is posted once, rendered, and counted", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const old = [item("a", "a1", 30), item("a", "a2", 20)]
          const { feedId, identifier, sourceId, webhook } = yield* baselined(old)
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 0, interrupted: 0, more: false })
          assert.deepStrictEqual(yield* inbox(webhook.id), [])

          const fresh = item("a", "a3", 1)
          script.serve(identifier, [...old, fresh])
          const polled = yield* delivery.pollSource(sourceId)
          assert.strictEqual(polled._tag, "Delivered")
          assert.deepInclude(polled, { queued: 1, skipped: 0 })
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 1)
          const messages = yield* inbox(webhook.id)
          assert.strictEqual(messages.length, 1)
          assert.deepStrictEqual(messages[0]!.body, bodyOf(fresh))
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state, d.message_id]), [["a3", "sent", messages[0]!.id]])
          // The same answer again is not modified; nothing more is posted.
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "NotModified")
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 0)
          const status = Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId)))
          assert.deepInclude(status, { state: "active", reason: null, delivered: 1, skipped: 0 })
          assert.isNotNull(status.lastPollAt)
          assert.isAbove(status.nextPollAt!.getTime(), Date.now() - 1000)
        }))

      it.effect("age cut-off, filters, the per-poll cap and order: oldest first, every skip stored with its reasons", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const options = { filter_words: ["spam"], filter_excl: true, filter_mode: "AND" as const }
          const { feedId, identifier, sourceId, webhook } = yield* baselined([], options)
          const served = [
            item("b", "new1", 1),
            item("b", "old", 25 * 60),
            item("b", "spam", 9, "Buy spam now"),
            ...[8, 7, 6, 5, 4, 3].map((age) => item("b", `p${age}`, age))
          ]
          script.serve(identifier, served)
          assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 5, skipped: 4 })
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 5)
          const messages = yield* inbox(webhook.id)
          assert.deepStrictEqual(messages.map((m) => m.body), ["p8", "p7", "p6", "p5", "p4"].map((id) => bodyOf(served.find((i) => i.id === id)!, options)))
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state, d.reason]), [
            ["old", "skipped", "older than 24 h"],
            ["spam", "skipped", "filter_words (excluded): \"spam\" in the title"],
            ["p8", "sent", null],
            ["p7", "sent", null],
            ["p6", "sent", null],
            ["p5", "sent", null],
            ["p4", "sent", null],
            ["p3", "skipped", "over the per-poll cap of 5"],
            ["new1", "skipped", "over the per-poll cap of 5"]
          ])
          assert.deepInclude(Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId))), { delivered: 5, skipped: 4 })
        }))

      it.effect("a feed created later on a polled source starts at its creation", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { identifier, sourceId } = yield* baselined([item("c", "c1", 60)])
          const webhook = yield* newWebhook
          const late = yield* insertFeed({ identifier, webhook, createdAt: minutesAgo(10) })
          script.serve(identifier, [item("c", "c1", 60), item("c", "before", 15), item("c", "after", 5)])
          yield* delivery.pollSource(sourceId)
          yield* delivery.postWebhook(webhook.id)
          assert.deepStrictEqual((yield* deliveriesOf(late)).map((d) => [d.item_id, d.state, d.reason]), [
            ["before", "skipped", "from before the feed was created"],
            ["after", "sent", null]
          ])
          assert.strictEqual((yield* inbox(webhook.id)).length, 1)
        }))

      it.effect("dedup across a restart: the same items polled again by a new process are not posted twice", () =>
        Effect.gen(function*() {
          const { identifier, sourceId, webhook } = yield* baselined([item("d", "d0", 30)])
          const served = [item("d", "d0", 30), item("d", "d1", 3), item("d", "d2", 2)]
          script.serve(identifier, served)
          // The first process polls (the deliveries are recorded) and stops before posting.
          yield* DeliveryEngine.use((d) => d.pollSource(sourceId)).pipe(Effect.provide(engine))
          // The next one polls the same items (its poll state is older: no NotModified), then posts.
          yield* Effect.gen(function*() {
            const delivery = yield* DeliveryEngine
            yield* SqlClient.SqlClient.use((sql) => sql`UPDATE feed_sources SET poll_state = NULL WHERE id = ${sourceId}`)
            assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 0, skipped: 0 })
            assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 2)
          }).pipe(Effect.provide(engine))
          yield* Effect.gen(function*() {
            const delivery = yield* DeliveryEngine
            yield* delivery.pollSource(sourceId)
            yield* delivery.postWebhook(webhook.id)
          }).pipe(Effect.provide(engine))
          assert.deepStrictEqual((yield* inbox(webhook.id)).map((m) => m.body), [bodyOf(served[1]!), bodyOf(served[2]!)])
        }))

      it.effect("webhook deleted (404): the feed is disabled with the reason, audited once, and nothing more is sent", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId, webhook } = yield* baselined([])
          yield* deleteWebhook(webhook)
          script.serve(identifier, [item("e", "e1", 3), item("e", "e2", 2)])
          yield* delivery.pollSource(sourceId)
          assert.deepInclude(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 1 })
          const status = Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId)))
          assert.strictEqual(status.state, "disabled")
          assert.match(status.reason ?? "", /webhook no longer exists \(404 Unknown Webhook, code 10015\)/)
          const rows = yield* deliveriesOf(feedId)
          assert.deepStrictEqual(rows.map((d) => [d.item_id, d.state]), [["e1", "failed"], ["e2", "failed"]])
          assert.match(rows[1]!.reason ?? "", /^not posted: the feed was disabled/)
          const audit = yield* auditOf(feedId)
          assert.deepStrictEqual(audit.map((a) => [a.user_id, a.user_name, a.event_type, a.module_name]), [["200000000000000002", "FeedsBot", "PATCH", "rss"]])
          assert.include(audit[0]!.event_string, status.reason!)
          // Later polls and posts do nothing for it: no request, no second entry.
          script.serve(identifier, [item("e", "e1", 3), item("e", "e2", 2), item("e", "e3", 1)])
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Idle")
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 0, interrupted: 0, more: false })
          assert.strictEqual((yield* auditOf(feedId)).length, 1)
          assert.strictEqual((yield* deliveriesOf(feedId)).length, 2)
          // The operator is told once, with the feed and why; never the webhook's token.
          const disabled = (yield* logged("feed disabled")).filter((l) => l.annotations["feed"] === String(feedId))
          assert.strictEqual(disabled.length, 1, JSON.stringify(disabled))
          assert.strictEqual(disabled[0]!.annotations["reason"], status.reason)
          assert.notInclude(JSON.stringify(yield* CapturedLogs.use((c) => c.lines)), webhook.token)
        }))

      it.effect("429 from the webhook: waited out within the call, nothing lost, nothing twice", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { identifier, sourceId, webhook } = yield* baselined([])
          const served = [item("f", "f1", 3), item("f", "f2", 2), item("f", "f3", 1)]
          script.serve(identifier, served)
          yield* delivery.pollSource(sourceId)
          yield* fault(webhook, "429", 2, 0.5)
          const started = Date.now()
          assert.deepInclude(yield* delivery.postWebhook(webhook.id), { sent: 3, failed: 0 })
          assert.isAtLeast(Date.now() - started, 900, "two 429s of 0.5 s were waited out")
          assert.deepStrictEqual((yield* inbox(webhook.id)).map((m) => m.body), served.map((i) => bodyOf(i)))
          // Each 429 logged under the route's template: the webhook's token is not in a log line.
          const limited = yield* logged("Chat platform answered 429")
          assert.isAtLeast(limited.length, 2, JSON.stringify(limited))
          for (const line of limited) assert.strictEqual(line.annotations["route"], "POST /webhooks/:webhook/:token")
          assert.notInclude(JSON.stringify(yield* CapturedLogs.use((c) => c.lines)), webhook.token)
        }))

      it.effect("500 from the webhook: it may be posted, so left `sending`; the next attempt looks in the channel, posts it once", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId, webhook } = yield* baselined([])
          script.serve(identifier, [item("g", "g1", 2)])
          yield* delivery.pollSource(sourceId)
          yield* fault(webhook, "500", 1)
          const retry = yield* Effect.flip(delivery.postWebhook(webhook.id))
          assert.strictEqual(retry._tag, "PostRetry")
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.state, d.attempts]), [["sending", 1]])
          assert.match((yield* deliveriesOf(feedId))[0]!.reason ?? "", /HTTP 500/)
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.state, d.attempts, d.reason]), [["sent", 2, null]])
          assert.strictEqual((yield* inbox(webhook.id)).length, 1)
        }))

      it.effect("no answer (a hang): timed out, left `sending`, looked for, posted once", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId, webhook } = yield* baselined([])
          script.serve(identifier, [item("h", "h1", 2)])
          yield* delivery.pollSource(sourceId)
          yield* fault(webhook, "hang", 1)
          assert.strictEqual((yield* Effect.flip(delivery.postWebhook(webhook.id)))._tag, "PostRetry")
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => d.state), ["sending"])
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 1)
          assert.strictEqual((yield* inbox(webhook.id)).length, 1)
        }))

      it.effect("bounded: after postAttempts the delivery fails with the reason, and the rest go on", () =>
        Effect.gen(function*() {
          const { feedId, identifier, sourceId, webhook } = yield* baselined([])
          yield* Effect.gen(function*() {
            const delivery = yield* DeliveryEngine
            script.serve(identifier, [item("k", "k1", 3), item("k", "k2", 2)])
            yield* delivery.pollSource(sourceId)
            yield* fault(webhook, "500", 2)
            assert.strictEqual((yield* Effect.flip(delivery.postWebhook(webhook.id)))._tag, "PostRetry")
            // Not in the channel: sent a second time, 500 again.
            assert.strictEqual((yield* Effect.flip(delivery.postWebhook(webhook.id)))._tag, "PostRetry")
            // Still not in the channel, and its attempts are spent.
            assert.deepInclude(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 1, interrupted: 1 })
          }).pipe(Effect.provide(processLayer({ pgbossSchema: pgboss, poller, settings: { postAttempts: 2 } })))
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state, d.reason]), [
            ["k1", "failed", "not posted after 2 attempts: The chat platform is unavailable (HTTP 500 after 1 attempts); try again shortly."],
            ["k2", "sent", null]
          ])
        }))

      it.effect("a row left `sending` by a stopped worker: looked for in its channel, not there, posted once; then the rest", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId, webhook } = yield* baselined([])
          script.serve(identifier, [item("i", "i1", 3), item("i", "i2", 2)])
          yield* delivery.pollSource(sourceId)
          // A worker claimed i1 and died during the send.
          yield* SqlClient.SqlClient.use((sql) =>
            sql`UPDATE feed_deliveries SET state = 'sending', attempts = 1, at = now() WHERE feed_id = ${feedId} AND item_id = 'i1'`
          )
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 2, failed: 0, interrupted: 1, more: false })
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state, d.reason]), [
            ["i1", "sent", null],
            ["i2", "sent", null]
          ])
          const marked = (yield* logged("had no answer")).filter((l) => l.annotations["webhook"] === webhook.id)
          assert.deepStrictEqual(marked.map((l) => l.annotations["count"]), [1], "the operator is told how many were looked for")
          assert.deepStrictEqual((yield* inbox(webhook.id)).map((m) => (m.body["content"] as string).split("\n")[1]), [
            "https://news.test/i/i1",
            "https://news.test/i/i2"
          ])
        }))

      it.effect("a failing source: feeds `failing` with the reason and a backoff; after FEED_FAILED_AFTER_HOURS disabled, audited, not polled", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId } = yield* baselined([])
          script.serve(identifier, new PollFailed({ kind: "http", status: 500, message: "The feed's server answered 500." }))
          const t0 = Date.now()
          const failed = yield* delivery.pollSource(sourceId)
          const t1 = Date.now()
          assert.deepInclude(failed, { _tag: "Failed", disabled: 0 })
          // The next poll, counted from the failed poll's time (its last_poll_at, taken during the call):
          // interval 1 s × 2^1, ±20 % (whole milliseconds).
          const polledAt = Option.getOrThrow(yield* DeliveryStore.use((s) => s.source(sourceId))).lastPollAt!.getTime()
          assert.isAtLeast(polledAt, t0)
          assert.isAtMost(polledAt, t1)
          const delay = (failed as { nextPollAt: Date }).nextPollAt.getTime() - polledAt
          assert.isAtLeast(delay, 1_600 - 5)
          assert.isAtMost(delay, 2_400 + 5)
          assert.deepInclude(Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId))), {
            state: "failing",
            reason: "The source could not be read: The feed's server answered 500."
          })
          assert.deepStrictEqual(yield* auditOf(feedId), [])
          // A day of failures later.
          yield* SqlClient.SqlClient.use((sql) =>
            sql`UPDATE feed_sources SET failing_since = now() - interval '25 hours' WHERE id = ${sourceId}`
          )
          assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Failed", disabled: 1, nextPollAt: null })
          const status = Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId)))
          assert.strictEqual(status.state, "disabled")
          assert.match(status.reason ?? "", /^The source has failed for 2[45] hours: The feed's server answered 500\./)
          assert.strictEqual((yield* auditOf(feedId)).length, 1)
          const disabled = (yield* logged("feed disabled")).filter((l) => l.annotations["feed"] === String(feedId))
          assert.deepStrictEqual(disabled.map((l) => l.annotations["reason"]), [status.reason])
          const polls = script.polls(identifier)
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Idle")
          assert.strictEqual(script.polls(identifier), polls)
          // Re-enabled (a PATCH): active again, its failures forgotten.
          const again = yield* DeliveryScheduling.use((s) => s.reenable(feedId))
          assert.deepStrictEqual(again, Option.some(sourceId))
          script.serve(identifier, [item("j", "j1", 1)])
          assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1 })
          assert.deepInclude(Option.getOrThrow(yield* DeliveryStore.use((s) => s.status(feedId))), { state: "active", reason: null })
        }))

      it.effect("the repair pass: a source never polled gets a poll now, a lost chain its next slot, waiting messages a post job", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const delivery = yield* DeliveryEngine
          const jobsOf = (queue: string, key: string, value: string) =>
            sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(pgboss)}.job WHERE name = ${queue} AND data->>${key} = ${value}`.pipe(
              Effect.map((rows) => Number(rows[0]!.n))
            )
          // Every other source of this suite gets planned too: take them out of the picture.
          yield* sql`UPDATE feed_sources SET next_poll_at = now() + interval '1 hour'`
          const fresh = yield* newWebhook
          const identifier = newSource()
          yield* insertFeed({ identifier, webhook: fresh })
          const neverPolled = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
          const { identifier: lostIdentifier, sourceId: lost, webhook } = yield* baselined([])
          yield* sql`UPDATE feed_sources SET next_poll_at = now() - interval '10 minutes' WHERE id = ${lost}`
          // A message recorded long ago whose post job was lost.
          script.serve(lostIdentifier, [item("r", "r1", 1)])
          yield* delivery.pollSource(lost)
          yield* sql`UPDATE feed_deliveries SET at = now() - interval '10 minutes' WHERE webhook_id = ${webhook.id}`
          yield* sql`UPDATE feed_sources SET next_poll_at = now() - interval '10 minutes' WHERE id = ${lost}`
          const before = { polls: yield* jobsOf("feed-poll", "sourceId", neverPolled), posts: yield* jobsOf("feed-post", "webhookId", webhook.id) }
          const t0 = Date.now()
          const outcome = yield* delivery.repair
          const t1 = Date.now()
          assert.deepInclude(outcome, { polls: 2, posts: 1 })
          const [a, b] = yield* Effect.forEach([neverPolled, lost], (id) => Effect.map(DeliveryStore.use((s) => s.source(id)), Option.getOrThrow))
          // At once: the pass's own time. At its next slot: after the pass's time, within the interval (1 s).
          assert.isAtLeast(a!.nextPollAt!.getTime(), t0, "at once")
          assert.isAtMost(a!.nextPollAt!.getTime(), t1, "at once")
          assert.isAbove(b!.nextPollAt!.getTime(), t0, "at its next slot")
          assert.isAtMost(b!.nextPollAt!.getTime(), t1 + 1_000, "at its next slot")
          assert.strictEqual(yield* jobsOf("feed-poll", "sourceId", neverPolled), before.polls + 1)
          // The post job of that webhook: one queued at most (stately), whoever sent it.
          assert.isAtLeast(yield* jobsOf("feed-post", "webhookId", webhook.id), Math.max(1, before.posts))
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 1)
        }))
    }
  )
}
