/**
 * Bad input through the whole engine (issue #14 "Bad input"): the live rss poller over real HTTP
 * (a node:http server in the test), the delivery engine on a database, the live Discord client
 * against the sandbox. A source that turns into garbage, a 50 MB body or a redirect loop: no
 * crash, nothing posted, the feed `failing` with a status that says why (not disabled: the source
 * may come back), and back to `active` when it does. A hostile custom_header (mentions, @everyone,
 * 5,000 characters of placeholders) on an item with mentions in its title: posted once, cut to
 * 2,000 characters, pinging no one.
 */
import { afterAll, assert, beforeAll, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { pollerLayer, serve, startPollServer } from "../sources/poll/PollServerFixtures.ts"
import type { PollServer } from "../sources/poll/PollServerFixtures.ts"
import { dbKinds } from "../utils/Db.ts"
import { auditOf, deliveriesOf, dropSchemaAtEnd, inbox, insertFeed, newWebhook, processLayer, world } from "./DeliveryFixtures.ts"

let server: PollServer
beforeAll(async () => {
  server = await startPollServer()
})
afterAll(() => server.close())

const rssOf = (items: ReadonlyArray<{ id: string; title: string; minutesAgo: number }>) =>
  `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Hostile</title><link>https://hostile.test/</link>
${
    items.map((i) =>
      `<item><title>${i.title}</title><link>https://hostile.test/${i.id}</link><guid>${i.id}</guid><pubDate>${
        new Date(Date.now() - i.minutesAgo * 60_000).toUTCString()
      }</pubDate></item>`
    ).join("\n")
  }
</channel></rss>`

const FIFTY_MB = 50 * 1024 * 1024
/** 50 MB of `a`, chunked, as long as the client reads; `written` counts what left. */
const huge = (counter: { written: number }) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/rss+xml" })
  const chunk = Buffer.alloc(64 * 1024, 0x61)
  const pump = () => {
    while (counter.written < FIFTY_MB && !res.destroyed) {
      counter.written += chunk.length
      if (!res.write(chunk)) return void res.once("drain", pump)
    }
    res.end()
  }
  res.write("<rss><channel><title>")
  pump()
}

let n = 0

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const engine = processLayer({ pgbossSchema: pgboss, poller: pollerLayer({}) })

  /** A feed on a path of the test server that serves a good feed first (its baseline). */
  const feedOn = (options = {}) =>
    Effect.gen(function*() {
      const path = `/hostile-${n++}.xml`
      server.routes.set(path, serve(rssOf([{ id: `${path}-old`, title: "Old", minutesAgo: 60 }]), { "content-type": "application/rss+xml" }))
      const webhook = yield* newWebhook
      const identifier = `${server.url}${path}`
      const feedId = yield* insertFeed({ identifier, webhook, options })
      const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
      assert.strictEqual((yield* DeliveryEngine.use((d) => d.pollSource(sourceId)))._tag, "Baseline")
      return { path, webhook, feedId, sourceId }
    })

  const statusOf = (feedId: string) => Effect.map(DeliveryStore.use((s) => s.status(feedId)), Option.getOrThrow)

  layer(Layer.provideMerge(engine, base), { excludeTestServices: true, timeout: "120 seconds" })(`hostile input on ${kind}`, (it) => {
    const counter = { written: 0 }
    const sources = [
      {
        what: "garbage bytes",
        handler: serve(Buffer.from([0x00, 0xff, 0x13, 0x37, ...Buffer.from("}{ not xml at all <<<")]), { "content-type": "application/rss+xml" }),
        reason: /^The source could not be read: .+ is something, not an RSS or Atom feed\.$/
      },
      {
        what: "a 50 MB body",
        handler: huge(counter),
        reason: /^The source could not be read: .+ sent more than 5 MiB; the gateway reads at most that much\.$/
      },
      {
        what: "a redirect loop",
        handler: undefined,
        reason: /^The source could not be read: .+ redirects in a loop \(.+ → .+\)\.$/
      }
    ] as const

    for (const source of sources) {
      it.effect(`a source serving ${source.what}: no crash, nothing posted, the feed failing with why; active again when the source recovers`, () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, path, sourceId, webhook } = yield* feedOn()
          if (source.handler === undefined) {
            server.routes.set(path, serve("", { location: `${path}-b` }, 302))
            server.routes.set(`${path}-b`, serve("", { location: path }, 307))
          } else {
            server.routes.set(path, source.handler)
          }
          const t0 = Date.now()
          const outcome = yield* delivery.pollSource(sourceId)
          const t1 = Date.now()
          assert.strictEqual(outcome._tag, "Failed")
          const status = yield* statusOf(feedId)
          assert.strictEqual(status.state, "failing")
          assert.match(status.reason ?? "", source.reason)
          assert.isNotNull(status.lastPollAt)
          // The failed poll's time is taken during the call; the next poll a backoff after it (1 s × 2^1, ±20 %).
          const polledAt = status.lastPollAt!.getTime()
          assert.isAtLeast(polledAt, t0)
          assert.isAtMost(polledAt, t1)
          const backoff = status.nextPollAt!.getTime() - polledAt
          assert.isAtLeast(backoff, 1_600 - 5, "polled again later (backoff)")
          assert.isAtMost(backoff, 2_400 + 5, "polled again later (backoff)")
          assert.deepStrictEqual(yield* auditOf(feedId), [], "failing is not disabled: nothing audited")
          assert.deepStrictEqual(yield* deliveriesOf(feedId), [])
          assert.deepStrictEqual(yield* inbox(webhook.id), [])
          if (source.what === "a 50 MB body") {
            yield* Effect.sleep("200 millis")
            assert.isBelow(counter.written, 20 * 1024 * 1024, `the server wrote ${counter.written} bytes: the body was not read to its end`)
          }

          // The source comes back with a new item: posted, the feed active again.
          server.routes.set(path, serve(rssOf([{ id: `${path}-old`, title: "Old", minutesAgo: 60 }, { id: `${path}-new`, title: "Back", minutesAgo: 1 }]), { "content-type": "application/rss+xml" }))
          assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1 })
          assert.deepInclude(yield* statusOf(feedId), { state: "active", reason: null })
          assert.strictEqual((yield* delivery.postWebhook(webhook.id)).sent, 1)
          assert.strictEqual((yield* inbox(webhook.id)).length, 1)
        }))
    }

    it.effect("a hostile custom_header (mentions, @everyone, 5,000 characters of placeholders): posted once, cut to 2,000, pinging no one", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const header = "@everyone @here <@123> <@&456> " + "%content%%title%%timestamp_Mars/Base%%author%".repeat(120)
        assert.isAbove(header.length, 5000)
        const { feedId, path, sourceId, webhook } = yield* feedOn({ custom_header: header })
        server.routes.set(
          path,
          serve(
            rssOf([{ id: `${path}-old`, title: "Old", minutesAgo: 60 }, { id: `${path}-ping`, title: "@everyone look &lt;@789&gt;", minutesAgo: 1 }]),
            { "content-type": "application/rss+xml" }
          )
        )
        assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1 })
        assert.deepInclude(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0 })
        const messages = yield* inbox(webhook.id)
        assert.strictEqual(messages.length, 1)
        const body = messages[0]!.body as { content: string; allowed_mentions: unknown }
        assert.deepStrictEqual(body.allowed_mentions, { parse: [] })
        assert.isAtMost([...body.content].length, 2000)
        assert.isTrue(body.content.startsWith("@everyone @here <@123> <@&456> "), body.content.slice(0, 80))
        assert.isTrue(body.content.endsWith(`…\nhttps://hostile.test/${path}-ping`), body.content.slice(-80))
        assert.include(body.content, "@everyone look <@789>")
        assert.include(body.content, "%timestamp_Mars/Base%", "an unknown zone stays as written")
        assert.deepInclude(yield* statusOf(feedId), { state: "active", reason: null, delivered: 1 })
      }))
  })
}
