/**
 * An uncertain send of a thread feed and of a forum feed reconciled (DeliveryReconcile.ts), with the
 * live Discord client against the sandbox, as UncertainSend.test.ts does for a channel: the execute's
 * connection is cut after the sandbox posted the message (`cut-after`) or before (`cut`). A message
 * sent into a thread is in the thread's history only (as on Discord), so it is found only by reading
 * the thread; a forum post (id unknown: the answer was cut) only among the server's active threads.
 * Found: recorded with its id, not posted twice; absent: posted exactly once, where it belongs.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT2_TOKEN, CHANNEL_INDEX, channelId, FORUM_WEBHOOKS, FORUMS, THREADS } from "../../src/sandbox/Seed.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { DeliveryEngine, PostRetry } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { dbKinds } from "../utils/Db.ts"
import { deliveriesOf, dropSchemaAtEnd, fault, insertFeed, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"
import type { TestWebhook } from "./DeliveryFixtures.ts"
import { rss } from "./ItemFixtures.ts"

const EXECUTE = "POST /webhooks/{id}/{token}"
const READ = "GET /channels/{id}/messages"
const THREADS_READ = "GET /guilds/{id}/threads/active"

const THREAD = THREADS[0]!
const FORUM = FORUMS[0]!
const FORUM_HOOK: TestWebhook = { id: FORUM_WEBHOOKS[0]!.id, token: FORUM_WEBHOOKS[0]!.token, channelId: FORUM.id }

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
const item = (id: string) =>
  rss({ id, title: `Item ${id}`, url: `https://uncertain.test/${id}`, publishedAt: minutesAgo(2), eventAt: minutesAgo(2), feedUrl: "https://uncertain.test/feed.xml" })

let sources = 0
const newSource = () => `https://uncertain.test/thread-src-${sources++}-${randomBytes(3).toString("hex")}.xml`

const calls = Effect.flatMap(SandboxServer, (sandbox) =>
  Effect.promise(async () => ((await (await fetch(`${sandbox.url}/sandbox/stats`)).json()) as { calls: Record<string, number> }).calls))
const delta = (before: Record<string, number>, after: Record<string, number>, route: string) => (after[route] ?? 0) - (before[route] ?? 0)

interface Posted {
  readonly id: string
  readonly thread_id?: string
  readonly body: Record<string, unknown>
}
/** What the webhook got, with where it went. */
const inbox = (webhookId: string) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    Effect.promise(async () =>
      ((await (await fetch(`${sandbox.url}/sandbox/discord/messages?webhook_id=${webhookId}`)).json()) as { messages: Array<Posted> }).messages
    ))

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const app = Layer.provideMerge(processLayer({ pgbossSchema: pgboss, poller }), base)

  /** A feed with one message `pending` for it: into the thread (on a webhook of the thread's channel), or a forum post. */
  const oneQueued = (name: string, where: "thread" | "forum") =>
    Effect.gen(function*() {
      const delivery = yield* DeliveryEngine
      const webhook: TestWebhook = where === "forum" ? FORUM_HOOK : yield* ChatPlatform.use((p) =>
        Effect.map(
          p.createWebhook(Redacted.make(BOT2_TOKEN), channelId(1, CHANNEL_INDEX.text), `Thread hook ${name}`),
          (w) => ({ id: w.id, token: Redacted.value(w.token!), channelId: w.channel_id })
        ))
      const identifier = newSource()
      const feedId = yield* insertFeed(where === "forum"
        ? { identifier, webhook, options: { forum_tags: ["Release"] }, forumTags: FORUM.tags }
        : { identifier, webhook, options: { thread_id: THREAD.id } })
      const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
      script.serve(identifier, [])
      assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")
      script.serve(identifier, [item(name)])
      assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 1 })
      return { webhook, feedId }
    })

  layer(app, { excludeTestServices: true, timeout: "120 seconds" })(`uncertain sends into threads and forums on ${kind}`, (it) => {
    it.effect("thread, cut after the platform posted it: found in the thread, recorded as sent, not posted twice", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("thread-posted", "thread")
        yield* fault(webhook, "cut-after")
        const before = yield* calls
        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        const posted = yield* inbox(webhook.id)
        assert.deepStrictEqual(posted.map((m) => m.thread_id), [THREAD.id], "the platform applied the send, in the thread")

        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sent", message_id: posted[0]!.id, reason: null })
        assert.deepStrictEqual((yield* inbox(webhook.id)).map((m) => m.id), [posted[0]!.id], "not posted twice")
        const after = yield* calls
        assert.strictEqual(delta(before, after, EXECUTE), 1, "one execute: the cut one")
        assert.strictEqual(delta(before, after, READ), 1, "one read: the thread's")
      }))

    it.effect("thread, cut before the platform posted it: posted exactly once, into the thread", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("thread-lost", "thread")
        yield* fault(webhook, "cut")
        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        assert.deepStrictEqual(yield* inbox(webhook.id), [], "nothing applied")
        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        const posted = yield* inbox(webhook.id)
        assert.deepStrictEqual(posted.map((m) => m.thread_id), [THREAD.id], "posted exactly once, into the thread")
        assert.match(String(posted[0]!.body["content"]), /\nhttps:\/\/uncertain\.test\/thread-lost$/)
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sent", message_id: posted[0]!.id })
      }))

    it.effect("forum, cut after the platform opened the post: found among the active threads by name and first message, recorded with the post's id, not posted twice", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("forum-posted", "forum")
        const earlier = (yield* inbox(webhook.id)).length
        yield* fault(webhook, "cut-after")
        const before = yield* calls
        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        const opened = (yield* inbox(webhook.id)).slice(earlier)
        assert.deepStrictEqual(opened.map((m) => [m.thread_id, m.body["thread_name"], m.body["applied_tags"]]), [
          [opened[0]!.id, "Item forum-posted", [FORUM.tags.find((t) => t.name === "Release")!.id]]
        ])

        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sent", message_id: opened[0]!.id, reason: null })
        assert.strictEqual((yield* inbox(webhook.id)).length, earlier + 1, "not posted twice")
        const after = yield* calls
        assert.strictEqual(delta(before, after, EXECUTE), 1)
        assert.strictEqual(delta(before, after, THREADS_READ), 1, "the server's active threads, once")
        assert.strictEqual(delta(before, after, READ), 1, "the post's first message")
      }))

    it.effect("forum, cut before the post was opened: posted exactly once, a post of its own", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const { feedId, webhook } = yield* oneQueued("forum-lost", "forum")
        const earlier = (yield* inbox(webhook.id)).length
        yield* fault(webhook, "cut")
        assert.instanceOf(yield* Effect.flip(delivery.postWebhook(webhook.id)), PostRetry)
        assert.strictEqual((yield* inbox(webhook.id)).length, earlier, "nothing applied")
        assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 1, failed: 0, interrupted: 1, more: false })
        const opened = (yield* inbox(webhook.id)).slice(earlier)
        assert.deepStrictEqual(opened.map((m) => [m.thread_id, m.body["thread_name"]]), [[opened[0]!.id, "Item forum-lost"]])
        assert.deepInclude((yield* deliveriesOf(feedId))[0], { state: "sent", message_id: opened[0]!.id })
      }))
  })
}
