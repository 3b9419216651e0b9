/**
 * Crossposting after a send (DeliveryCrosspost.ts, delivery.md §10 `crosspost`), in the same
 * in-memory world as DeliveryPost's tests: what is reserved and published, with which token and
 * ids, and what a delivery ends as when the budget is spent or the platform refuses; a delivery
 * stays sent and its feed active whatever happens to its publication, and it is never published twice.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { OpenDelivery } from "../../src/services/delivery/DeliveryStore.ts"
import type { PlatformMessage } from "../../src/services/platform/ChatPlatform.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { CHANNEL, rejected, WEBHOOK, world } from "./DeliveryPostFixtures.ts"

const split = (id: string): OpenDelivery["body"] => ({ content: `message ${id} 1/3`, continued: [{ content: "2/3" }, { content: "3/3" }] })
const NOT = "not crossposted: "

describe("DeliveryCrosspost: a crosspost feed's posted messages are published", () => {
  it.effect("published by the bot in the webhook's channel, after the send is recorded; a feed that does not ask: nothing reserved", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true }, { id: "b" }] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.reserved, [{ deliveryId: "a", slots: 1 }])
      assert.deepStrictEqual(w.published, [{ token: "bot-token", channelId: CHANNEL, messageId: "msg-1" }])
      assert.deepStrictEqual(w.table(), [["a", "sent", null, "msg-1"], ["b", "sent", null, "msg-2"]])
      assert.deepStrictEqual(w.missed, [])
    }))

  it.effect("a split item: every message it posted, in order, its slots reserved together", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true, body: split("a") }] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.reserved, [{ deliveryId: "a", slots: 3 }])
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["msg-1", "msg-2", "msg-3"])
    }))

  it.effect("a split whose follow-up was not posted: the messages it did post", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "a", crosspost: true, body: split("a") }],
        answers: [Effect.succeed("m-1"), Effect.succeed("m-2"), rejected(400, "Invalid Form Body", 50035)]
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.reserved, [{ deliveryId: "a", slots: 2 }])
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["m-1", "m-2"])
    }))

  it.effect("over the channel's budget: posted, not published, counted with when the next could be; the rest go on", () =>
    Effect.gen(function*() {
      const freeAt = new Date("2030-01-01T10:00:00.000Z")
      const w = world({
        rows: [{ id: "a", crosspost: true }, { id: "b", crosspost: true }],
        reservations: [{ _tag: "OverBudget", channelId: CHANNEL, freeAt }]
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["msg-2"])
      assert.deepStrictEqual(w.missed, [{
        deliveryId: "a",
        reason: `${NOT}channel ${CHANNEL} had published its 10 messages of the hour (the platform's limit); the next could be published from 2030-01-01T10:00:00.000Z`
      }])
      assert.deepStrictEqual(w.table().map((r) => r[1]), ["sent", "sent"])
      const lines = yield* logged("was not crossposted", ["Info"])
      assert.deepStrictEqual(lines.map((l) => [l.annotations["delivery"], l.annotations["feed"]]), [["a", "1"]])
      assert.deepStrictEqual(yield* logged("was not crossposted"), [], "over the budget is no warning")
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("the bot lost MANAGE_MESSAGES (403): posted, counted with the reason, logged without a token; the feed stays active, the next is still tried", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true }, { id: "b", crosspost: true }], crossposts: [rejected(403, "Missing Permissions", 50013)] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      const reason = "the bot may not publish in the webhook's channel (403 Missing Permissions, code 50013): give it MANAGE_MESSAGES there, or set crosspost to false"
      assert.deepStrictEqual(w.missed, [{ deliveryId: "a", reason: `${NOT}${reason}` }])
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["msg-1", "msg-2"])
      assert.deepStrictEqual([w.stateCalls, w.audits, w.feedState()], [[], [], "active"])
      const warnings = yield* logged("was not crossposted")
      assert.deepStrictEqual(warnings.map((l) => l.annotations["reason"]), [reason])
      const all = yield* CapturedLogs.use((c) => c.lines)
      assert.isFalse(JSON.stringify(all).includes("bot-token") || JSON.stringify(all).includes("hook-token"), "no secret in the logs")
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("a split's second publication refused: counted once, the third not tried", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true, body: split("a") }], crossposts: [Effect.void, rejected(404, "Unknown Message", 10008)] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["msg-1", "msg-2"])
      assert.deepStrictEqual(w.missed, [{ deliveryId: "a", reason: `${NOT}the message or its channel is gone (404 Unknown Message, code 10008)` }])
    }))

  it.effect("no answer, or the client's 503 (a 429 longer than it waits): counted, never asked again", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "a", crosspost: true }, { id: "b", crosspost: true }],
        crossposts: [
          Effect.fail(RequestTimeout.of("The chat platform did not answer within 10 seconds.")),
          Effect.fail(ServiceUnavailable.of("The chat platform is rate limiting the gateway (route x); try again later.", 3000))
        ]
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.published.length, 2)
      assert.deepStrictEqual(w.missed.map((m) => [m.deliveryId, m.reason]), [
        ["a", `${NOT}the chat platform did not publish it: The chat platform did not answer within 10 seconds.`],
        ["b", `${NOT}the chat platform did not publish it: The chat platform is rate limiting the gateway (route x); try again later.`]
      ])
    }))

  it.effect("already published (40033, an earlier answer lost): counted as published", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true }], crossposts: [rejected(400, "This message has already been crossposted.", 40033)] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.missed, [])
    }))

  it.effect("reserved already (Taken) or gone: neither published nor counted", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true }, { id: "b", crosspost: true }], reservations: [{ _tag: "Taken" }, { _tag: "Gone" }] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([w.published, w.missed], [[], []])
    }))

  it.effect("the bot's token does not decrypt: counted with why, nothing asked", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true }], botToken: null })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.published, [])
      assert.deepStrictEqual(w.missed, [{ deliveryId: "a", reason: `${NOT}the bot's token cannot be decrypted with the configured keys` }])
    }))

  it.effect("into a thread, or with no message id: counted, nothing reserved", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "a", crosspost: true, body: { content: "in a thread", thread_id: "330000000000000001" } }, { id: "b", crosspost: true }],
        answers: [Effect.succeed("m-a"), Effect.succeed(null)]
      })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.reserved, [])
      assert.deepStrictEqual(w.missed, [
        { deliveryId: "a", reason: `${NOT}it was posted into a thread; only an announcement channel's own messages can be published` },
        { deliveryId: "b", reason: `${NOT}the chat platform did not give the posted message's id` }
      ])
    }))

  it.effect("a split whose follow-up came back without an id: counted, nothing reserved", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", crosspost: true, body: split("a") }], answers: [Effect.succeed("m-1"), Effect.succeed(null)] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual([w.reserved, w.missed.map((m) => m.deliveryId)], [[], ["a"]])
    }))

  it.effect("the store down at the reservation: the delivery stays sent, the job goes on, the outage logged", () =>
    Effect.gen(function*() {
      const w = world({
        rows: [{ id: "a", crosspost: true }, { id: "b", crosspost: true }],
        reservations: [ServiceUnavailable.of("The delivery storage is unavailable.", 5)]
      })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.published.map((p) => p.messageId), ["msg-2"])
      const errors = yield* logged("crosspost could not be recorded")
      assert.deepStrictEqual(errors.map((l) => [l.level, l.annotations["delivery"], l.annotations["reason"]]), [["Error", "a", "The delivery storage is unavailable."]])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("an unanswered send found in its channel: recorded sent, then its message published (1 slot); one sent again: published as it is sent", () =>
    Effect.gen(function*() {
      const found: PlatformMessage = { id: "m-x", content: "message x", timestamp: new Date().toISOString(), webhook_id: WEBHOOK, author_id: WEBHOOK }
      const w = world({ rows: [{ id: "x", state: "sending", attempts: 1, crosspost: true }], channel: [found] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(w.table(), [["x", "sent", null, "m-x"]])
      assert.deepStrictEqual(w.reserved, [{ deliveryId: "x", slots: 1 }])
      assert.deepStrictEqual(w.published, [{ token: "bot-token", channelId: CHANNEL, messageId: "m-x" }])
      const again = world({ rows: [{ id: "y", state: "sending", attempts: 1, crosspost: true }], channel: [] })
      yield* again.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(again.published.map((p) => p.messageId), ["msg-1"])
      assert.strictEqual(again.sent.length, 1)
    }))
})
