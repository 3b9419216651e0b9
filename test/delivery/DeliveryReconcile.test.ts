/**
 * A send that had no answer, reconciled before anything else of its webhook (DeliveryReconcile.ts,
 * issue #30 item 5), against the same in-memory log and scripted platform as DeliveryPostMutation:
 * what the channel read finds decides whether the delivery is recorded sent, sent once more, or
 * failed as unknown; nothing is ever posted twice blindly.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { PlatformMessage } from "../../src/services/platform/ChatPlatform.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { PostRetry } from "../../src/services/delivery/DeliveryPost.ts"
import { looksLike, SKEW_MS } from "../../src/services/delivery/DeliveryReconcile.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { CHANNEL, rejected, WEBHOOK, world } from "./DeliveryPostFixtures.ts"

/** A message of the channel as the platform lists it. */
const inChannel = (id: string, content: string, o: { readonly webhook?: string | null; readonly ageMs?: number } = {}): PlatformMessage => ({
  id,
  content,
  timestamp: new Date(Date.now() - (o.ageMs ?? 1_000)).toISOString(),
  webhook_id: o.webhook === undefined ? WEBHOOK : o.webhook,
  author_id: o.webhook ?? WEBHOOK
})

describe("DeliveryPost: a send that had no answer is looked for in its channel first", () => {
  it.effect("found (this webhook, the same content, after the send): recorded sent with that id, not posted again; the rest go on", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", attempts: 1, reason: "no answer" }, { id: "y" }],
        channel: [
          inChannel("m-other-hook", "message x", { webhook: "900000000000000002" }),
          inChannel("m-x", " message x\n"),
          inChannel("m-before", "message x", { ageMs: 10 * 60_000 }),
          inChannel("m-plain", "message x", { webhook: null })
        ]
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 1, more: false })
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "m-x"], ["y", "sent", null, "msg-1"]])
      assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message y" }], "x was not posted again")
      assert.deepStrictEqual(w.reads, [{ token: "bot-token", channelId: CHANNEL, options: { limit: 50 } }])
      const warnings = yield* logged("had no answer")
      assert.deepStrictEqual(warnings.map((l) => [l.annotations["webhook"], l.annotations["count"]]), [[WEBHOOK, 1]])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("absent: sent once more (one more attempt), then the rest", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending", attempts: 1 }, { id: "y" }],
        channel: [inChannel("m-old", "message x", { ageMs: 5 * 60_000 }), inChannel("m-other", "something else")]
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 1, more: false })
      assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message x" }, { content: "message y" }])
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "msg-1"], ["y", "sent", null, "msg-2"]])
      assert.strictEqual(w.rows[0]!.attempts, 2)
    }))

  it.effect("a message another delivery recorded already is not claimed again: this one is sent", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "a", state: "sent", messageId: "m-1", body: { content: "same" } }, { id: "x", state: "sending", body: { content: "same" } }],
        channel: [inChannel("m-1", "same")]
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.table(), [["a", "sent", null, "m-1"], ["x", "sent", null, "msg-1"]])
    }))

  it.effect("absent after postAttempts: failed, not posted, with the last send's reason", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending", attempts: 3, reason: "the chat platform answered 502" }], postAttempts: 3 })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 0, failed: 1, interrupted: 1, more: false })
      assert.deepStrictEqual(w.table(), [["x", "failed", "not posted after 3 attempts: the chat platform answered 502", null]])
      assert.deepStrictEqual(w.sent, [])
    }))

  it.effect("pages back 50 at a time until the send's start; past 250 messages it cannot tell: failed as unknown, never sent blindly", () =>
    Effect.gen(function*() {
      const full = Array.from({ length: 50 }, (_, i) => inChannel(`n${i}`, "newer"))
      const w = world({ rows: [{ id: "x", state: "sending" }], channel: full })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.strictEqual(w.reads.length, 5)
      assert.deepStrictEqual(w.reads[1]!.options, { limit: 50, before: "n49" })
      assert.match(w.rows[0]!.reason!, /^unknown whether it was posted: more than 250 messages/)
      assert.strictEqual(w.rows[0]!.state, "failed")
      assert.deepStrictEqual(w.sent, [])
    }))

  it.effect("the bot may not read the channel (403): failed as unknown with why, never sent blindly; the rest go on", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "x", state: "sending" }, { id: "y" }],
        channel: new PlatformRejected({ status: 403, message: "Missing Access", code: 50001 })
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 1, interrupted: 1, more: false })
      assert.match(w.rows[0]!.reason!, /^unknown whether it was posted: .*cannot read the webhook's channel 310000000000000102 \(403 Missing Access\)/)
      assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message y" }])
    }))

  it.effect("no bot token to read with: failed as unknown, not sent", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending" }], botToken: null })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.match(w.rows[0]!.reason!, /^unknown whether it was posted: .*bot's token cannot be decrypted/)
      assert.deepStrictEqual([w.sent, w.reads], [[], []])
    }))

  it.effect("absent, but the bot lacks READ_MESSAGE_HISTORY (an empty history proves nothing): failed as unknown, never sent again", () =>
    Effect.gen(function*() {
      const readOnly = String((1n << 10n) | (1n << 11n)) // VIEW_CHANNEL, SEND_MESSAGES
      for (const guilds of [[{ id: "300000000000000001", permissions: readOnly }], [{ id: "300000000000000999", permissions: String(1n << 16n) }], []]) {
        const w = world({ rows: [{ id: "x", state: "sending", attempts: 1 }, { id: "y" }], channel: [], guilds })
        assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 1, interrupted: 1, more: false })
        assert.deepStrictEqual(w.table()[0], [
          "x",
          "failed",
          "unknown whether it was posted: the bot lacks READ_MESSAGE_HISTORY in server 300000000000000001, so its history reads empty; give it that permission",
          null
        ])
        assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message y" }], JSON.stringify(guilds))
        assert.deepStrictEqual(w.guildReads, ["bot-token"])
      }
    }))

  it.effect("absent with READ_MESSAGE_HISTORY or ADMINISTRATOR alone: sent once more; found: the server list is not read", () =>
    Effect.gen(function*() {
      for (const bit of [1n << 16n, 1n << 3n]) {
        const w = world({ rows: [{ id: "x", state: "sending", attempts: 1 }], channel: [], guilds: [{ id: "300000000000000001", permissions: String(bit) }] })
        assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 0, interrupted: 1, more: false })
        assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message x" }])
      }
      const found = world({ rows: [{ id: "x", state: "sending", attempts: 1 }], channel: [inChannel("m-x", "message x")], guilds: [] })
      yield* found.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([found.table()[0], found.guildReads], [["x", "sent", null, "m-x"], []])
    }))

  it.effect("absent, and the bot's server list cannot be read now (503): the job is retried, nothing sent", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending" }], channel: [], guilds: ServiceUnavailable.of("the chat platform is unavailable", 5) })
      const e = yield* Effect.flip(w.poster.postWebhook(WEBHOOK))
      assert.instanceOf(e, PostRetry)
      assert.match(e.message, /the bot's servers could not be read/)
      assert.deepStrictEqual([w.table(), w.sent], [[["x", "sending", null, null]], []])
    }))

  it.effect("the read fails for now (503): the job is retried, the row still `sending`, nothing sent", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending" }, { id: "y" }], channel: ServiceUnavailable.of("the chat platform is unavailable", 5) })
      const e = yield* Effect.flip(w.poster.postWebhook(WEBHOOK))
      assert.instanceOf(e, PostRetry)
      assert.match(e.message, /could not be read.*the chat platform is unavailable/)
      assert.deepStrictEqual(w.table(), [["x", "sending", null, null], ["y", "pending", null, null]])
      assert.deepStrictEqual(w.sent, [])
    }))
})

describe("DeliveryReconcile: the edges of recognising and paging (a double post or a silent drop if wrong)", () => {
  const sentAt = new Date("2026-03-01T12:00:00.000Z")
  const at = (ms: number) => new Date(ms).toISOString()
  const windowStart = sentAt.getTime() - SKEW_MS
  const mine = (content: string, timestamp: string, webhook: string | null = WEBHOOK): PlatformMessage => ({ id: "360000000000000001", content, timestamp, webhook_id: webhook, author_id: WEBHOOK })

  it("looksLike: this webhook, the content compared without surrounding whitespace, dated no earlier than the send's start minus SKEW_MS", () => {
    const cases: ReadonlyArray<readonly [string, Parameters<typeof looksLike>[0]["body"], PlatformMessage, boolean]> = [
      ["the same content", { content: "message x" }, mine("message x", at(sentAt.getTime())), true],
      ["the message's content trimmed (Discord trims)", { content: "message x" }, mine("  message x\n", at(sentAt.getTime())), true],
      ["the stored content trimmed", { content: " message x\n" }, mine("message x", at(sentAt.getTime())), true],
      ["another content", { content: "message x" }, mine("message y", at(sentAt.getTime())), false],
      ["dated exactly at the window's start", { content: "message x" }, mine("message x", at(windowStart)), true],
      ["dated 1 ms before the window's start", { content: "message x" }, mine("message x", at(windowStart - 1)), false],
      ["another webhook", { content: "message x" }, mine("message x", at(sentAt.getTime()), "900000000000000002"), false],
      ["not a webhook's message", { content: "message x" }, mine("message x", at(sentAt.getTime()), null), false],
      ["a stored body without content (embeds only)", { embeds: [{ title: "x" }] } as never, mine("", at(sentAt.getTime())), false],
      ["an unreadable stored body", null, mine("message x", at(sentAt.getTime())), false]
    ]
    for (const [name, body, m, expected] of cases) {
      assert.strictEqual(looksLike({ webhookId: WEBHOOK, body, sentAt }, m), expected, name)
    }
  })

  it.effect("an unreadable stored message: failed as unknown, nothing read, nothing sent", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending", body: null }, { id: "y" }] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 1, interrupted: 1, more: false })
      assert.deepStrictEqual(w.table()[0], ["x", "failed", "unknown whether it was posted: the stored message is unreadable", null])
      assert.deepStrictEqual([w.reads, w.sent.map((s) => s.body)], [[], [{ content: "message y" }]])
    }))

  /** `count` messages of the channel, newest first, the last of them dated `lastAt`; snowflake ids so the fixture pages them. */
  const page = (count: number, lastAt: number, first = 100) =>
    Array.from({ length: count }, (_, i) =>
      mine("newer", at(i === count - 1 ? lastAt : sentAt.getTime() + 1_000 - i), WEBHOOK)
    ).map((m, i) => ({ ...m, id: `3600000000000${first + count - 1 - i}` }))

  it.effect("a full page of 50: its last older than the window ends the look (absent, sent once more); dated exactly at the start, the next page is read", () =>
    Effect.gen(function*() {
      // 50 messages, the last before the send's window: nothing older can be it; one read, sent again.
      const older = world({ rows: [{ id: "x", state: "sending", sentAt }], channel: page(50, windowStart - 1) })
      yield* older.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([older.reads.length, older.sent.map((s) => s.body), older.table()[0]![1]], [1, [{ content: "message x" }], "sent"])

      // The 50th dated exactly at the window's start: the next page may hold the message (dated so too): it is found there.
      const x = { ...mine("message x", at(windowStart)), id: "3600000000000099" }
      const edge = world({ rows: [{ id: "x", state: "sending", sentAt }], channels: { [CHANNEL]: [...page(50, windowStart), x] } })
      yield* edge.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(edge.reads.map((r) => r.options), [{ limit: 50 }, { limit: 50, before: "3600000000000100" }])
      assert.deepStrictEqual([edge.table(), edge.sent], [[["x", "sent", null, "3600000000000099"]], []])
    }))

  it.effect("the read times out (408, or the client's own time-out without a detail): the job is retried, the row still `sending`, nothing sent", () =>
    Effect.gen(function*() {
      const cases = [
        [new PlatformRejected({ status: 408, message: "Request Timeout" }), `the webhook's channel ${CHANNEL} could not be read to find an unanswered send: the chat platform answered 408`],
        [new RequestTimeout({ problems: [] }), `the webhook's channel ${CHANNEL} could not be read to find an unanswered send: RequestTimeout`]
      ] as const
      for (const [failure, message] of cases) {
        const w = world({ rows: [{ id: "x", state: "sending" }], channel: failure })
        const e = yield* Effect.flip(w.poster.postWebhook(WEBHOOK))
        assert.instanceOf(e, PostRetry)
        assert.strictEqual(e.message, message)
        assert.deepStrictEqual([w.table(), w.sent], [[["x", "sending", null, null]], []])
      }
    }))

  it.effect("found and sent again are logged (Info) with the delivery, and the found message's id", () =>
    Effect.gen(function*() {
      const found = world({ rows: [{ id: "x", state: "sending" }], channel: [inChannel("m-x", "message x")] })
      yield* found.poster.postWebhook(WEBHOOK)
      const foundLines = yield* logged("an unanswered send was found in its channel: recorded as sent", ["Info"])
      assert.deepStrictEqual(foundLines.map((l) => [l.annotations["delivery"], l.annotations["message"]]), [["x", "m-x"]])

      const again = world({ rows: [{ id: "y", state: "sending" }], channel: [] })
      yield* again.poster.postWebhook(WEBHOOK)
      const againLines = yield* logged("an unanswered send is not in its channel: sent again", ["Info"])
      assert.deepStrictEqual(againLines.map((l) => l.annotations["delivery"]), ["y"])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("absent after postAttempts with no reason kept: failed as stopped during the send", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "x", state: "sending", attempts: 3, reason: null }], postAttempts: 3 })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.table(), [["x", "failed", "not posted after 3 attempts: the worker stopped during the send", null]])
      assert.deepStrictEqual(w.sent, [])
    }))

  it.effect("the resend is one more attempt: its refusal for now at the last attempt fails the delivery, before it is retried", () =>
    Effect.gen(function*() {
      const cases = [
        // attempts so far, postAttempts → what a 429 on the resend leaves
        [2, 4, ["x", "failed", "not posted after 4 attempts: the chat platform answered 429", null]],
        [1, 4, ["x", "pending", "the chat platform answered 429", null]]
      ] as const
      for (const [attempts, postAttempts, row] of cases) {
        const w = world({ rows: [{ id: "x", state: "sending", attempts }], channel: [], postAttempts, answers: [rejected(429, "You are being rate limited.")] })
        yield* Effect.result(w.poster.postWebhook(WEBHOOK))
        assert.deepStrictEqual(w.table(), [row], `${attempts} of ${postAttempts}`)
        assert.strictEqual(w.sent.length, 1)
      }
    }))
})
