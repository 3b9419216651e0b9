/**
 * The posting of one webhook's messages (DeliveryPost.ts, delivery.md §4) against an in-memory
 * delivery log and a scripted platform, so every answer of the platform is one line: what is
 * sent, what each delivery row ends as and with which reason, whether the feed is disabled and
 * from which states, when the job is retried (PostRetry) and when the next job is queued.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { MAX_PER_JOB, PostRetry } from "../../src/services/delivery/DeliveryPost.ts"
import { PostQueue } from "../../src/services/delivery/DeliveryQueues.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { rejected, WEBHOOK, world } from "./DeliveryPostFixtures.ts"

describe("DeliveryPost: what is posted and what each delivery ends as", () => {
  it.effect("posts oldest first with the webhook's token and body; records the platform's message id", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a" }, { id: "b" }] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.sent.map((s) => [s.webhookId, s.token, s.body]), [
        [WEBHOOK, "hook-token", { content: "message a" }],
        [WEBHOOK, "hook-token", { content: "message b" }]
      ])
      assert.deepStrictEqual(w.table(), [["a", "sent", null, "msg-1"], ["b", "sent", null, "msg-2"]])
    }))

  it.effect("nothing left mid-send: no warning, no channel read", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a" }] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.deepStrictEqual(yield* logged("had no answer"), [])
      assert.deepStrictEqual(w.reads, [])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("an unreadable stored message and an undecryptable token: that delivery failed with why, unsent; the rest go on", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", body: null }, { id: "b", token: null }, { id: "c" }] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 2, interrupted: 0, more: false })
      assert.deepStrictEqual(w.table(), [
        ["a", "failed", "the stored message is unreadable", null],
        ["b", "failed", "the webhook's token cannot be decrypted with the configured keys", null],
        ["c", "sent", null, "msg-1"]
      ])
      assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message c" }])
    }))

  it.effect("a delivery another worker claimed first is skipped (neither sent nor counted) and the rest go on", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", stolen: true }, { id: "b" }] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.sent.map((s) => s.body), [{ content: "message b" }])
    }))

  it.effect(`at most ${MAX_PER_JOB} a job; the rest go to the webhook's next job (one per webhook)`, () =>
    Effect.gen(function*() {
      const w = world({ rows: Array.from({ length: MAX_PER_JOB + 3 }, (_, i) => ({ id: `m${i}` })) })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: MAX_PER_JOB, failed: 0, interrupted: 0, more: true })
      assert.strictEqual(w.sent.length, MAX_PER_JOB)
      assert.deepStrictEqual(w.rows.filter((r) => r.state === "pending").map((r) => r.id), ["m50", "m51", "m52"])
      assert.deepStrictEqual(w.queued, [{ queue: PostQueue, payload: { webhookId: WEBHOOK }, options: { singletonKey: WEBHOOK } }])
    }))

  it.effect(`exactly ${MAX_PER_JOB} waiting: all sent, no next job`, () =>
    Effect.gen(function*() {
      const w = world({ rows: Array.from({ length: MAX_PER_JOB }, (_, i) => ({ id: `m${i}` })) })
      const outcome = yield* w.poster.postWebhook(WEBHOOK)
      assert.strictEqual(outcome.sent, MAX_PER_JOB)
      assert.strictEqual(w.sent.length, MAX_PER_JOB)
    }))
})

describe("DeliveryPost: the platform's refusals", () => {
  for (
    const [status, message, code, reason] of [
      [404, "Unknown Webhook", 10015, /^The chat webhook no longer exists \(404 Unknown Webhook, code 10015\)/],
      [403, "Missing Access", undefined, /^The chat webhook may not post in its channel \(403\)\./],
      [401, "Invalid Webhook Token", 50027, /^The chat platform refused the webhook's token \(401 Invalid Webhook Token, code 50027\)/]
    ] as const
  ) {
    for (const from of ["active", "failing"] as const) {
      it.effect(`${status} on a ${from} feed: disabled with the reason, its waiting messages failed, audited, nothing more sent`, () =>
        Effect.gen(function*() {
          const w = world({ rows: [{ id: "a" }, { id: "b" }], feedState: from, answers: [rejected(status, message, code)] })
          assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 0, failed: 1, interrupted: 0, more: false })
          assert.strictEqual(w.sent.length, 1)
          assert.strictEqual(w.feedState(), "disabled")
          assert.deepStrictEqual(w.stateCalls.map((c) => [c.ids, c.from, c.to]), [[["1"], ["active", "failing"], "disabled"]])
          const why = w.rows[0]!.reason!
          assert.match(why, reason)
          assert.deepStrictEqual(w.table(), [["a", "failed", why, null], ["b", "failed", `not posted: the feed was disabled (${why})`, null]])
          assert.deepStrictEqual(w.audits.map((a) => a.eventType), ["PATCH"])
        }).pipe(Effect.provide(CapturedLogs.layer)))
    }
  }

  it.effect("a message the platform will not take (400): that delivery failed with the platform's words, the feed stays, the rest go on", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a" }, { id: "b" }], answers: [rejected(400, "Cannot send an empty message", 50006)] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 1, interrupted: 0, more: false })
      assert.deepStrictEqual(w.table(), [
        ["a", "failed", "the chat platform refused the message (400: Cannot send an empty message)", null],
        ["b", "sent", null, "msg-1"]
      ])
      assert.strictEqual(w.feedState(), "active")
      assert.deepStrictEqual(w.stateCalls, [])
      assert.deepStrictEqual(w.audits, [])
    }))

  for (const status of [429, 408] as const) {
    it.effect(`a ${status} refusal: not posted, back to pending, the job retried (PostRetry), nothing after it sent`, () =>
      Effect.gen(function*() {
        const w = world({ rows: [{ id: "a" }, { id: "b" }], answers: [rejected(status, "slow down")] })
        const e = yield* Effect.flip(w.poster.postWebhook(WEBHOOK))
        assert.instanceOf(e, PostRetry)
        assert.deepInclude(e, { webhookId: WEBHOOK, message: `the chat platform answered ${status}` })
        assert.deepStrictEqual(w.table(), [["a", "pending", `the chat platform answered ${status}`, null], ["b", "pending", null, null]])
        assert.strictEqual(w.sent.length, 1)
        assert.strictEqual(w.feedState(), "active")
      }))
  }

  it.effect("a 503 (5xx) or no answer: left `sending` (it may be posted) with the fault's own message, the job retried", () =>
    Effect.gen(function*() {
      for (const [error, why] of [
        [ServiceUnavailable.of("the chat platform answered 502", 5), "the chat platform answered 502"],
        [RequestTimeout.of("the chat platform did not answer within 1 second"), "the chat platform did not answer within 1 second"],
        [new ServiceUnavailable({ problems: [] }), "ServiceUnavailable"]
      ] as const) {
        const w = world({ rows: [{ id: "a" }], answers: [Effect.fail(error)] })
        const e = yield* Effect.flip(w.poster.postWebhook(WEBHOOK))
        assert.instanceOf(e, PostRetry)
        assert.deepInclude(e, { webhookId: WEBHOOK, message: why })
        assert.deepStrictEqual(w.table(), [["a", "sending", why, null]])
        assert.strictEqual(w.feedState(), "active")
      }
    }))

  it.effect("after postAttempts the delivery fails with how many and why, and the rest go on", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", attempts: 2 }, { id: "b" }], postAttempts: 3, answers: [rejected(429, "slow down")] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 1, failed: 1, interrupted: 0, more: false })
      assert.deepStrictEqual(w.table(), [["a", "failed", "not posted after 3 attempts: the chat platform answered 429", null], ["b", "sent", null, "msg-1"]])
    }))
})
