/**
 * Idempotency keys on the feed routes (issue #30), PGlite and PostgreSQL: a create (claimed: it
 * calls the chat platform and queues the first poll) and a delete (atomic: one transaction) sent
 * twice with their key are applied once and answered the same; the audit log has one entry each.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { channelId } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { TestApp } from "../utils/TestApp.ts"
import { feedsOverHttp, modulePath, sandbox } from "./FeedsHttpFixtures.ts"
import { send } from "./IdempotencyFixtures.ts"

const auditsOf = (feedId: string, eventType: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_entries
        WHERE module_name = 'rss' AND item_identifier = ${Number(feedId)} AND event_type = ${eventType}`,
      (rows) => rows[0]!.n
    ))

feedsOverHttp("idempotency keys", (it) => {
  it.effect("rss: a create and a delete sent twice with their keys are applied once, answered the same", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const body = { feed_identifier: `${app.url}${RSS_PATHS.rss}?k=${randomUUID()}`, webhook_channel: channelId(1, 2) }
      const createKey = randomUUID()
      const created = yield* send("POST", `${modulePath("rss")}/feeds`, createKey, body)
      assert.strictEqual(created.status, 200, created.text)
      const again = yield* send("POST", `${modulePath("rss")}/feeds`, createKey, body)
      assert.strictEqual(again.status, 200, again.text)
      assert.strictEqual(again.replayed, "true")
      assert.strictEqual(again.text, created.text)
      const id: string = JSON.parse(created.text).id
      const list = JSON.parse((yield* send("GET", `${modulePath("rss")}/feeds`, undefined)).text)
      assert.strictEqual(list.feeds.filter((f: { feed_identifier: string }) => f.feed_identifier === JSON.parse(created.text).feed_identifier).length, 1)
      assert.strictEqual(yield* auditsOf(id, "PUSH"), 1)

      const deleteKey = randomUUID()
      const deleted = yield* send("DELETE", `${modulePath("rss")}/feeds/${id}`, deleteKey)
      assert.strictEqual(deleted.status, 200, deleted.text)
      const deletedAgain = yield* send("DELETE", `${modulePath("rss")}/feeds/${id}`, deleteKey)
      assert.strictEqual(deletedAgain.status, 200, deletedAgain.text)
      assert.strictEqual(deletedAgain.replayed, "true")
      assert.strictEqual(yield* auditsOf(id, "DELETE"), 1)
    }))

  it.effect("a 503 is not kept: the retry with its key runs again once the source answers", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const feed = `${app.url}${RSS_PATHS.rss}?k=${randomUUID()}`
      const body = { feed_identifier: feed, webhook_channel: channelId(1, 2) }
      const key = randomUUID()
      yield* sandbox("POST", "/sandbox/faults", { route: `GET ${RSS_PATHS.rss}`, kind: "429", retry_after: 1, count: 1 })
      const down = yield* send("POST", `${modulePath("rss")}/feeds`, key, body)
      assert.strictEqual(down.status, 503, down.text)
      const again = yield* send("POST", `${modulePath("rss")}/feeds`, key, body)
      assert.strictEqual(again.status, 200, again.text)
      assert.isNull(again.replayed)
      const replayed = yield* send("POST", `${modulePath("rss")}/feeds`, key, body)
      assert.strictEqual(replayed.replayed, "true")
      assert.strictEqual(replayed.text, again.text)
      const sql = yield* SqlClient.SqlClient
      assert.deepStrictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM feeds WHERE feed_identifier = ${feed}`)[0]!.n, 1)
    }))
})
