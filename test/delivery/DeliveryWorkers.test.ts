/**
 * The delivery engine end to end on a database (PGlite always, PostgreSQL with TEST_DATABASE_URL),
 * run by workers on the job engine, one and then two (as two processes would): a scripted source,
 * the live Discord client against the sandbox; waits for the inbox with deadlines.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import {
  dropSchemaAtEnd,
  inbox,
  insertFeed,
  newWebhook,
  platformLayer,
  processLayer,
  scriptedPoller,
  TestDatabase,
  waitUntil,
  world
} from "./DeliveryFixtures.ts"
import { bodyOf, item, newSource } from "./DeliveryEngineFixtures.ts"

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, layerAs, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))

  describe(`delivery on workers, on ${kind}`, () => {
    // The test's own Discord client, to create webhooks; each worker has its own.
    layer(Layer.provideMerge(platformLayer, base).pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true, timeout: "240 seconds" })("jobs", (it) => {
      it.effect("one worker: a new feed is baselined at once, then a published item is posted once, polls chained", () =>
        Effect.gen(function*() {
          const webhook = yield* newWebhook
          const identifier = newSource()
          script.serve(identifier, [item("w", "w0", 30)])
          yield* Effect.gen(function*() {
            yield* insertFeed({ identifier, webhook })
            const scheduling = yield* DeliveryScheduling
            const sourceId = yield* scheduling.attach("rss", identifier)
            yield* scheduling.start(sourceId)
            yield* waitUntil("the baseline", Effect.map(DeliveryStore.use((s) => s.source(sourceId)), (s) => Option.getOrThrow(s).baselinedAt !== null))
            const fresh = item("w", "w1", 0)
            script.serve(identifier, [item("w", "w0", 30), fresh])
            yield* waitUntil("the message", Effect.map(inbox(webhook.id), (m) => m.length === 1))
            const polls = script.polls(identifier)
            yield* waitUntil("two more polls", Effect.sync(() => script.polls(identifier) >= polls + 2), "20 seconds")
            const messages = yield* inbox(webhook.id)
            assert.deepStrictEqual(messages.map((m) => m.body), [bodyOf(fresh)])
          }).pipe(Effect.provide(processLayer({ pgbossSchema: pgboss, poller, worker: {} })))
        }))

      it.effect("two workers on one database: every item posted exactly once", () =>
        Effect.gen(function*() {
          const db = yield* TestDatabase
          const feeds = yield* Effect.forEach([0, 1, 2, 3], () =>
            Effect.gen(function*() {
              const webhook = yield* newWebhook
              const identifier = newSource()
              script.serve(identifier, [])
              const feedId = yield* insertFeed({ identifier, webhook })
              return { webhook, identifier, feedId }
            }))
          const workerAs = (name: string) =>
            processLayer({ pgbossSchema: pgboss, poller: layerAs(name), worker: { pollBatch: 1, pollConcurrency: 2, postConcurrency: 2 } })
          const worker = workerAs("one")
          // The second worker has a pool of its own (another process, in effect); on PGlite it shares the one connection.
          const second = workerAs("two").pipe(Layer.provide(db.anotherPool))
          yield* Effect.gen(function*() {
            const scheduling = yield* DeliveryScheduling
            for (const f of feeds) yield* scheduling.start(yield* scheduling.attach("rss", f.identifier))
            yield* waitUntil(
              "every baseline",
              Effect.map(SqlClient.SqlClient.use((sql) => sql`SELECT count(*)::int AS n FROM feed_sources WHERE baselined_at IS NOT NULL
                AND identifier IN ${sql.in(feeds.map((f) => f.identifier))}`), (rows) => Number(rows[0]!["n"]) === feeds.length)
            )
            // Three rounds of three items per source, published while both workers poll.
            for (let round = 0; round < 3; round++) {
              for (const f of feeds) {
                const n = (k: number) => item("x", `${f.feedId}-${round}-${k}`, 0)
                script.serve(f.identifier, [...Array.from({ length: round * 3 }, (_, k) => item("x", `${f.feedId}-${Math.floor(k / 3)}-${k % 3}`, 0)), n(0), n(1), n(2)])
              }
              yield* waitUntil(
                `round ${round} posted`,
                Effect.map(Effect.forEach(feeds, (f) => inbox(f.webhook.id)), (all) => all.every((m) => m.length >= (round + 1) * 3)),
                "90 seconds"
              )
            }
            // A moment for any duplicate to show.
            yield* Effect.sleep("2 seconds")
            for (const f of feeds) {
              const urls = (yield* inbox(f.webhook.id)).map((m) => (m.body["content"] as string).split("\n").at(-1))
              assert.strictEqual(urls.length, 9, `feed ${f.feedId}: ${urls.join(", ")}`)
              assert.strictEqual(new Set(urls).size, 9)
            }
            assert.isAbove(script.pollsBy("one"), 0, "the first worker polled")
            assert.isAbove(script.pollsBy("two"), 0, "the second worker polled")
          }).pipe(Effect.provide(Layer.merge(worker, second)))
        }), 200_000)
    })
  })
}
