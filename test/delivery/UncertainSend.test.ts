/**
 * An uncertain send reconciled (issue #30 item 5, delivery.md §4), with the live Discord client
 * against the sandbox: the connection of a webhook's execute is cut before the answer — after the
 * sandbox posted the message (`cut-after`) or before (`cut`). The job is retried and the delivery
 * stays `sending`; the next job reads the webhook's channel (GET /channels/{id}/messages with the
 * bot's token) and records the message it finds as sent, not posting it twice, or posts it once.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { DeliveryEngine, PostRetry } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { dbKinds } from "../utils/Db.ts"
import { deliveriesOf, dropSchemaAtEnd, fault, inbox, insertFeed, newWebhook, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"
import type { TestWebhook } from "./DeliveryFixtures.ts"
import { rss } from "./ItemFixtures.ts"

const EXECUTE = "POST /webhooks/{id}/{token}"
const READ = "GET /channels/{id}/messages"

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
const item = (id: string, age: number) =>
  rss({ id, title: `Item ${id}`, url: `https://uncertain.test/${id}`, publishedAt: minutesAgo(age), eventAt: minutesAgo(age), feedUrl: "https://uncertain.test/feed.xml" })

let sources = 0
const newSource = () => `https://uncertain.test/src-${sources++}-${randomBytes(3).toString("hex")}.xml`

/** How many times the sandbox served each route. */
const calls = Effect.flatMap(SandboxServer, (sandbox) =>
  Effect.promise(async () => ((await (await fetch(`${sandbox.url}/sandbox/stats`)).json()) as { calls: Record<string, number> }).calls))

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const app = Layer.provideMerge(processLayer({ pgbossSchema: pgboss, poller }), base)

  /** A feed on a webhook of its own with one message `pending` for it. */
  const oneQueued = (name: string) =>
    Effect.gen(function*() {
      const delivery = yield* DeliveryEngine
      const webhook: TestWebhook = yield* newWebhook
      const identifier = newSource()
      const feedId = yield* insertFeed({ identifier, webhook })
      const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
      script.serve(identifier, [])
      assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")
      script.serve(identifier, [item(name, 2)])
      assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1 })
      return { webhook, feedId }
    })

  layer(app, { excludeTestServices: true, timeout: "120 seconds" })(`uncertain sends on ${kind}`, (it) => {
    it.effect("cut after the platform posted it: found in the channel, recorded as sent with its id, not posted twice", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("posted")
        yield* fault(webhook, "cut-after")
        const before = yield* calls

        const cut = yield* Effect.flip(delivery.postWebhook(webhook.id))
        assert.instanceOf(cut, PostRetry)
        const [row] = yield* deliveriesOf(feedId)
        assert.deepInclude(row, { state: "sending", message_id: null })
        const posted = yield* inbox(webhook.id)
        assert.strictEqual(posted.length, 1, "the platform applied the send")

        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        const [done] = yield* deliveriesOf(feedId)
        assert.deepInclude(done, { state: "sent", message_id: posted[0]!.id, reason: null })
        assert.deepStrictEqual((yield* inbox(webhook.id)).map((m) => m.id), [posted[0]!.id], "not posted twice")
        const after = yield* calls
        assert.strictEqual((after[EXECUTE] ?? 0) - (before[EXECUTE] ?? 0), 1, "one execute: the cut one")
        assert.strictEqual((after[READ] ?? 0) - (before[READ] ?? 0), 1, "one read of the channel")
      }))

    it.effect("cut before the platform posted it: not in the channel, posted exactly once", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("lost")
        yield* fault(webhook, "cut")
        const before = yield* calls

        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sending", message_id: null })
        assert.deepStrictEqual(yield* inbox(webhook.id), [], "nothing applied")

        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        const posted = yield* inbox(webhook.id)
        assert.strictEqual(posted.length, 1, "posted exactly once")
        assert.match(String(posted[0]!.body["content"]), /https:\/\/uncertain\.test\/lost/)
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sent", message_id: posted[0]!.id })
        const after = yield* calls
        assert.strictEqual((after[EXECUTE] ?? 0) - (before[EXECUTE] ?? 0), 2, "the cut execute and the one after the read")
        assert.strictEqual((after[READ] ?? 0) - (before[READ] ?? 0), 1)

        // Nothing left for a later job to do.
        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 0, interrupted: 0, more: false })
        assert.strictEqual((yield* inbox(webhook.id)).length, 1)
      }))

    it.effect("cut after the platform posted it, and the bot may not read the history: failed as unknown, never posted twice", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const sandbox = yield* SandboxServer
        const permissions = (method: string, body?: unknown) =>
          Effect.promise(() =>
            fetch(`${sandbox.url}/sandbox/discord/permissions`, {
              method,
              headers: { "content-type": "application/json" },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            }).then((r) => r.status)
          )
        const { feedId, webhook } = yield* oneQueued("unreadable")
        yield* fault(webhook, "cut-after")
        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        assert.strictEqual((yield* inbox(webhook.id)).length, 1, "the platform applied the send")
        // The feeds bot keeps VIEW_CHANNEL (the read is answered, with no messages) but not READ_MESSAGE_HISTORY.
        assert.strictEqual(yield* permissions("POST", { guild_id: "300000000000000001", user_id: "200000000000000002", deny: String(1n << 16n) }), 200)
        const outcome = yield* delivery.postWebhook(webhook.id).pipe(Effect.ensuring(permissions("DELETE")))
        assert.deepStrictEqual(outcome, { sent: 0, failed: 1, interrupted: 1, more: false })
        assert.strictEqual((yield* inbox(webhook.id)).length, 1, "not posted twice")
        const [row] = yield* deliveriesOf(feedId)
        assert.deepInclude(row, { state: "failed", message_id: null })
        assert.match(String(row!.reason), /^unknown whether it was posted: the bot lacks READ_MESSAGE_HISTORY/)
      }))
  })
}
