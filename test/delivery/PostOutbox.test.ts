/**
 * A poll's new messages always get a `feed-post` job (delivery.md §4, §6), also when the webhook's
 * job starts and finishes while the poll's transaction is still open. `feed-post` is `stately`: a
 * send while a job of the webhook waits to start is skipped, and that waiting job can be claimed by
 * another worker, find nothing committed, and finish before the poll commits. Without a send after
 * the commit, the new messages waited for the repair pass (two minutes overdue, then the next minute's
 * tick): what the CI run of the several-workers test saw as "119 of 120" after 45 s.
 *
 * PostgreSQL only: on PGlite the one connection serialises the poll's transaction and the job's
 * claim, so the interleaving cannot happen there.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { PostQueue } from "../../src/services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { deliveriesOf, dropSchemaAtEnd, inbox, insertFeed, newWebhook, platformLayer, processLayer, scriptedPoller, TestDatabase, waitUntil, world } from "./DeliveryFixtures.ts"
import { dbKinds } from "../utils/Db.ts"
import { rss } from "./ItemFixtures.ts"

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
const source = `https://outbox.test/${randomBytes(3).toString("hex")}.xml`
const item = (id: string, age: number) =>
  rss({ id, title: `Item ${id}`, url: `${source}#${id}`, publishedAt: minutesAgo(age), eventAt: minutesAgo(age), feedUrl: source })

describe.skipIf(!dbKinds.includes("postgres"))("the post job of a poll's messages, on postgres", () => {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world("postgres")))

  /** Runs once, on the first send of `feed-post` that was skipped (a job waits already): set by the test. */
  let onSkippedPostSend: Effect.Effect<void> | undefined
  const engine = processLayer({
    pgbossSchema: pgboss,
    poller,
    // An hour's interval: no planned poll comes due while the test runs.
    settings: { pollIntervalSeconds: 3600 },
    wrapEngine: (e) =>
      JobEngine.of({
        ...e,
        send: (queue, payload, options) =>
          Effect.tap(e.send(queue, payload, options), (id) => {
            const step = onSkippedPostSend
            if (queue.name !== PostQueue.name || Option.isSome(id) || step === undefined) return Effect.void
            onSkippedPostSend = undefined
            return step
          })
      })
  })

  layer(Layer.provideMerge(engine, Layer.provideMerge(platformLayer, base)), { excludeTestServices: true, timeout: "120 seconds" })("by hand", (it) => {
    it.effect("the webhook's waiting job runs and finishes before the poll commits: the new message is still posted by a job, at once", () =>
      Effect.gen(function*() {
        const db = yield* TestDatabase
        const delivery = yield* DeliveryEngine
        const webhook = yield* newWebhook
        const feedId = yield* insertFeed({ identifier: source, webhook })
        const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", source))
        script.serve(source, [item("old", 30)])
        assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")

        // A post job of the webhook waits to start (an earlier poll's, say).
        const waiting = yield* JobEngine.use((e) => e.send(PostQueue, { webhookId: webhook.id }, { singletonKey: webhook.id }))
        assert.isTrue(Option.isSome(waiting))

        // The poll's send inside its transaction is skipped for it; right then, on another connection,
        // a worker claims that job, finds nothing committed to post, and completes it.
        let finished = 0
        onSkippedPostSend = Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ id: string }>`UPDATE ${sql(pgboss)}.job SET state = 'completed', started_on = now(), completed_on = now()
            WHERE name = ${PostQueue.name} AND singleton_key = ${webhook.id} AND state = 'created' RETURNING id`
          finished = rows.length
        }).pipe(Effect.provide(db.anotherPool), Effect.orDie)

        script.serve(source, [item("old", 30), item("new", 1)])
        assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1, skipped: 0 })
        assert.strictEqual(finished, 1, "the interleaving happened: the waiting job finished while the poll's transaction was open")
        assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state]), [["new", "pending"]])

        // A worker starts: the message is posted by a job within seconds. The repair pass (run at the
        // worker's start) would not send one: the message is not two minutes overdue.
        yield* waitUntil("the message", Effect.map(inbox(webhook.id), (m) => m.length === 1), "20 seconds").pipe(
          Effect.provide(processLayer({ pgbossSchema: pgboss, poller, settings: { pollIntervalSeconds: 3600 }, worker: {} }))
        )
        const messages = yield* inbox(webhook.id)
        assert.deepStrictEqual(messages.map((m) => (m.body["content"] as string).split("\n").at(-1)), [`${source}#new`])
        assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state]), [["new", "sent"]])
      }))
  })
})
