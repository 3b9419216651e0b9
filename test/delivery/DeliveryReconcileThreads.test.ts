/**
 * A send that had no answer, looked for where it was sent (DeliveryReconcile.ts): a message sent
 * into `thread_id` is in the thread's history, so the thread is read, not the webhook's channel; a
 * forum post's id is unknown until the platform answers, so the server's active threads are read
 * and the forum's posts of that name checked, newest first, by their first message. Against the
 * scripted platform of DeliveryPostFixtures; the sandbox runs of the same: UncertainSendThreads.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { PlatformMessage } from "../../src/services/platform/ChatPlatform.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { PostRetry } from "../../src/services/delivery/DeliveryPost.ts"
import { CHANNEL, WEBHOOK, world } from "./DeliveryPostFixtures.ts"

const SERVER = "300000000000000001"
const THREAD = "310000000000000110"
const OTHER_FORUM = "310000000000000211"

const message = (id: string, content: string, o: { readonly webhook?: string | null; readonly ageMs?: number } = {}): PlatformMessage => ({
  id,
  content,
  timestamp: new Date(Date.now() - (o.ageMs ?? 1_000)).toISOString(),
  webhook_id: o.webhook === undefined ? WEBHOOK : o.webhook,
  author_id: o.webhook ?? WEBHOOK
})

/** A forum post of the webhook's forum (CHANNEL stands for it here) and its first message. */
const post = (id: string, name: string, parent = CHANNEL) => ({ id, name, parent_id: parent })
const forumBody = (id: string) => ({ content: `message ${id}`, thread_name: "Launch", applied_tags: ["350000000000000101"] })

describe("DeliveryReconcile: a thread feed's send is looked for in its thread", () => {
  it.effect("found in the thread (not the channel): recorded sent with its id, not posted again", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: { content: "message x", thread_id: THREAD } }],
        channel: [],
        channels: { [THREAD]: [message("350000000000000051", "message x")] }
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 0, interrupted: 1, more: false })
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "350000000000000051"]])
      assert.deepStrictEqual(w.reads.map((r) => [r.channelId, r.options]), [[THREAD, { limit: 50 }]])
      assert.deepStrictEqual(w.sent, [])
    }))

  it.effect("absent from the thread: sent once more, into the thread", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: { content: "message x", thread_id: THREAD } }],
        // In the channel, but a thread feed's message never is: not taken for it.
        channel: [message("350000000000000052", "message x")],
        channels: { [THREAD]: [] }
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.sent.map((s) => [s.body, s.options]), [[{ content: "message x" }, { wait: true, threadId: THREAD }]])
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "msg-1"]])
    }))

  it.effect("the thread cannot be read (deleted: 404): failed as unknown naming the thread, never sent blindly", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: { content: "message x", thread_id: THREAD } }],
        channels: { [THREAD]: new PlatformRejected({ status: 404, message: "Unknown Channel", code: 10003 }) }
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.table(), [[
        "x",
        "failed",
        `unknown whether it was posted: the send had no answer and the bot cannot read the thread ${THREAD} (404 Unknown Channel)`,
        null
      ]])
      assert.deepStrictEqual(w.sent, [])
    }))
})

describe("DeliveryReconcile: a forum post is looked for among the server's active threads", () => {
  it.effect("found: the forum's post of that name whose first message is the delivery's; recorded with the post's id", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: [
          post("350000000000000070", "Launch", OTHER_FORUM),
          post("350000000000000060", "Something else"),
          post("350000000000000050", " Launch "),
          post("not-a-snowflake", "Launch")
        ],
        channels: { "350000000000000050": [message("350000000000000051", "a reply"), message("350000000000000050", "message x")] }
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 0, interrupted: 1, more: false })
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "350000000000000050"]])
      assert.deepStrictEqual(w.threadReads, [{ token: "bot-token", guildId: SERVER }])
      // Only the post of that name in this forum, by its first message: the one just after id − 1.
      assert.deepStrictEqual(w.reads.map((r) => [r.channelId, r.options]), [["350000000000000050", { limit: 1, after: "350000000000000049" }]])
      assert.deepStrictEqual(w.sent, [])
    }))

  it.effect("posts of that name that are not it (another author, another text, before the send, recorded already): sent once more, newest checked first", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [
          { id: "a", state: "sent", messageId: "350000000000000040", body: forumBody("x") },
          { id: "x", state: "sending", body: forumBody("x") }
        ],
        threads: [40, 41, 42, 43].map((n) => post(`3500000000000000${n}`, "Launch")),
        channels: {
          "350000000000000040": [message("350000000000000040", "message x")],
          "350000000000000041": [message("350000000000000041", "message x", { webhook: "900000000000000009" })],
          "350000000000000042": [message("350000000000000042", "another text")],
          "350000000000000043": [message("350000000000000043", "message x", { ageMs: 10 * 60_000 })]
        }
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.reads.map((r) => r.channelId), ["350000000000000043", "350000000000000042", "350000000000000041"])
      assert.deepStrictEqual(w.sent.map((s) => s.body), [forumBody("x")])
      assert.deepStrictEqual(w.table(), [["a", "sent", null, "350000000000000040"], ["x", "sent", null, "msg-1"]])
    }))

  it.effect("no post of that name: sent once more; more than 5 to look through: failed as unknown", () =>
    Effect.gen(function*() {
      const none = world({ rows: [{ id: "x", state: "sending", body: forumBody("x") }], threads: [] })
      yield* none.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([none.reads, none.sent.length, none.table()[0]![1]], [[], 1, "sent"])

      const many = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: [10, 11, 12, 13, 14, 15].map((n) => post(`3500000000000000${n}`, "Launch")),
        channels: Object.fromEntries([10, 11, 12, 13, 14, 15].map((n) => [`3500000000000000${n}`, [message(`3500000000000000${n}`, "other")]]))
      })
      yield* many.poster.postWebhook(WEBHOOK)
      assert.strictEqual(many.reads.length, 5)
      assert.deepStrictEqual(many.table(), [["x", "failed", `unknown whether it was posted: more than 5 posts named "Launch" in its forum, too many to look through`, null]])
      assert.deepStrictEqual(many.sent, [])
    }))

  it.effect("the active threads cannot be read: 403 → failed as unknown naming the forum; 503 → the job retried, nothing sent", () =>
    Effect.gen(function*() {
      const refused = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: new PlatformRejected({ status: 403, message: "Missing Access", code: 50001 })
      })
      yield* refused.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(refused.table(), [[
        "x",
        "failed",
        `unknown whether it was posted: the send had no answer and the bot cannot read the active posts of the webhook's forum ${CHANNEL} (403 Missing Access)`,
        null
      ]])

      const down = world({ rows: [{ id: "x", state: "sending", body: forumBody("x") }], threads: ServiceUnavailable.of("the chat platform is unavailable", 5) })
      const e = yield* Effect.flip(down.poster.postWebhook(WEBHOOK))
      assert.instanceOf(e, PostRetry)
      assert.strictEqual(e.message, `the active posts of the webhook's forum ${CHANNEL} could not be read to find an unanswered send: the chat platform is unavailable`)
      assert.deepStrictEqual([down.sent, down.table()], [[], [["x", "sending", null, null]]])

      const postDown = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: [post("350000000000000050", "Launch")],
        channels: { "350000000000000050": new PlatformRejected({ status: 429, message: "You are being rate limited." }) }
      })
      const retried = yield* Effect.flip(postDown.poster.postWebhook(WEBHOOK))
      assert.strictEqual(retried.message, "the forum post 350000000000000050 could not be read to find an unanswered send: the chat platform answered 429")
    }))
})

describe("DeliveryReconcile: the edges of the forum's posts (a double post or a silent drop if wrong)", () => {
  const HIGH = "1000000000000000000" // 19 digits: the newest
  const MID = "350000000000000050" // 18
  const LOW = "99999999999999999" // 17: the oldest, though the largest as a string
  const permutations = [[LOW, MID, HIGH], [LOW, HIGH, MID], [MID, LOW, HIGH], [MID, HIGH, LOW], [HIGH, LOW, MID], [HIGH, MID, LOW]]

  it.effect("posts are checked newest first by their snowflake's value (ids of different lengths), whatever order the platform lists them in", () =>
    Effect.gen(function*() {
      for (const order of permutations) {
        const w = world({
          rows: [{ id: "x", state: "sending", body: forumBody("x") }],
          threads: order.map((id) => post(id, "Launch")),
          channels: Object.fromEntries(order.map((id) => [id, [message(id, "another text")]]))
        })
        yield* w.poster.postWebhook(WEBHOOK)
        assert.deepStrictEqual(w.reads.map((r) => r.channelId), [HIGH, MID, LOW], order.join(","))
        assert.deepStrictEqual(w.sent.map((s) => s.body), [forumBody("x")])
      }
    }))

  it.effect("a thread id that is not a snowflake (letters before or after, more than 20 digits) is not read: the post that is one is found", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: ["x350000000000000080", "350000000000000081x", "123456789012345678901", MID].map((id) => post(id, "Launch")),
        channels: { [MID]: [message(MID, "message x")] }
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.reads.map((r) => r.channelId), [MID])
      assert.deepStrictEqual([w.table(), w.sent], [[["x", "sent", null, MID]], []])
    }))

  it.effect("a post is the delivery's only by its own first message: a reply that looks like it (the first deleted), or nothing readable, is not; sent once more", () =>
    Effect.gen(function*() {
      const cases = [
        ["a reply with the same text", [message("350000000000000051", "message x")]],
        ["no message readable", []]
      ] as const
      for (const [name, messages] of cases) {
        const w = world({ rows: [{ id: "x", state: "sending", body: forumBody("x") }], threads: [post(MID, "Launch")], channels: { [MID]: messages } })
        yield* w.poster.postWebhook(WEBHOOK)
        assert.deepStrictEqual([w.table(), w.sent.map((s) => s.body)], [[["x", "sent", null, "msg-1"]], [forumBody("x")]], name)
      }
    }))

  it.effect("exactly 5 posts of that name, none the delivery's: all looked at, sent once more (6: failed as unknown, the other test)", () =>
    Effect.gen(function*() {
      const ids = [10, 11, 12, 13, 14].map((n) => `3500000000000000${n}`)
      const w = world({
        rows: [{ id: "x", state: "sending", body: forumBody("x") }],
        threads: ids.map((id) => post(id, "Launch")),
        channels: Object.fromEntries(ids.map((id) => [id, [message(id, "other")]]))
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.strictEqual(w.reads.length, 5)
      assert.deepStrictEqual([w.table(), w.sent.map((s) => s.body)], [[["x", "sent", null, "msg-1"]], [forumBody("x")]])
    }))

  it.effect("the stored post name is compared without surrounding whitespace too", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", body: { ...forumBody("x"), thread_name: "  Launch\n" } }],
        threads: [post(MID, "Launch")],
        channels: { [MID]: [message(MID, "message x")] }
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([w.table(), w.sent], [[["x", "sent", null, MID]], []])
    }))

  it.effect("a crosspost feed's send found in a thread or a forum post: recorded sent, counted as not crossposted (in a thread), nothing reserved or published", () =>
    Effect.gen(function*() {
      const cases = [
        ["thread", { content: "message x", thread_id: THREAD }, { channels: { [THREAD]: [message("350000000000000051", "message x")] } }, "350000000000000051"],
        ["forum post", forumBody("x"), { threads: [post(MID, "Launch")], channels: { [MID]: [message(MID, "message x")] } }, MID]
      ] as const
      for (const [name, body, where, id] of cases) {
        const w = world({ rows: [{ id: "x", state: "sending", crosspost: true, body }], ...where })
        yield* w.poster.postWebhook(WEBHOOK)
        assert.deepStrictEqual(w.table(), [["x", "sent", null, id]], name)
        assert.deepStrictEqual([w.reserved, w.published, w.sent], [[], [], []], name)
        assert.deepStrictEqual(w.missed, [{ deliveryId: "x", reason: "not crossposted: it was posted into a thread; only an announcement channel's own messages can be published" }], name)
      }
    }))
})
