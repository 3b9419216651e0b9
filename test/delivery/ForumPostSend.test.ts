/**
 * A forum post refused for its tags (DeliveryForumPost.ts): the tags are the forum's as last read, so
 * one deleted since makes the platform refuse the form (400, 50035); the post is sent once more
 * without `applied_tags`. Anything else refused is what it always was: that delivery failed with why.
 * Over the scripted platform of DeliveryPostFixtures (every answer one line).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { refusedTags } from "../../src/services/delivery/DeliveryForumPost.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { rejected, WEBHOOK, world } from "./DeliveryPostFixtures.ts"

const post = { content: "message a", thread_name: "Launch", applied_tags: ["350000000000000101", "350000000000000102"] }
const form = rejected(400, "Invalid Form Body", 50035)

describe("a forum post refused for its tags", () => {
  it.effect("sent once more without applied_tags: posted, recorded with that message's id, a warning saying how to refresh the tags", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", body: post }, { id: "b" }], answers: [form] })
      assert.deepStrictEqual(yield* w.poster.postWebhook(WEBHOOK), { sent: 2, failed: 0, interrupted: 0, more: false })
      assert.deepStrictEqual(w.sent.map((s) => s.body), [post, { content: "message a", thread_name: "Launch" }, { content: "message b" }])
      assert.deepStrictEqual(w.table(), [["a", "sent", null, "msg-1"], ["b", "sent", null, "msg-2"]])
      const warnings = yield* logged("posted without them")
      assert.deepStrictEqual(warnings.map((l) => [l.annotations["webhook"], l.annotations["tags"]]), [[WEBHOOK, post.applied_tags.join(",")]])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("refused again without them: failed with the second refusal, sent twice in all", () =>
    Effect.gen(function*() {
      const w = world({ rows: [{ id: "a", body: post }], answers: [form, rejected(400, "Invalid Form Body", 50035)] })
      yield* w.poster.postWebhook(WEBHOOK)
      assert.strictEqual(w.sent.length, 2)
      assert.deepStrictEqual(w.table(), [["a", "failed", "the chat platform refused the message (400: Invalid Form Body)", null]])
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.effect("any other refusal, or one of a message with no tags: sent once, failed as before", () =>
    Effect.gen(function*() {
      for (const [body, answer] of [
        [post, rejected(400, "Cannot send an empty message", 50006)],
        [post, rejected(413, "Request entity too large")],
        [{ content: "message a", thread_name: "Launch" }, form],
        [{ content: "message a", applied_tags: ["1"] }, form]
      ] as const) {
        const w = world({ rows: [{ id: "a", body }], answers: [answer] })
        yield* w.poster.postWebhook(WEBHOOK)
        assert.strictEqual(w.sent.length, 1, JSON.stringify(body))
        assert.strictEqual(w.table()[0]![1], "failed")
      }
    }))

  it("the rule: 400 with Discord's form code, a post (thread_name) with at least one tag", () => {
    const refusal = new PlatformRejected({ status: 400, message: "Invalid Form Body", code: 50035 })
    const table: ReadonlyArray<readonly [string, Parameters<typeof refusedTags>[0], PlatformRejected, boolean]> = [
      ["a post with tags, form refused", post, refusal, true],
      ["no tags", { ...post, applied_tags: [] }, refusal, false],
      ["no thread_name (not a post)", { content: "x", applied_tags: ["1"] }, refusal, false],
      ["another code", post, new PlatformRejected({ status: 400, message: "x", code: 50006 }), false],
      ["no code", post, new PlatformRejected({ status: 400, message: "x" }), false],
      ["another status", post, new PlatformRejected({ status: 403, message: "x", code: 50035 }), false]
    ]
    for (const [name, body, e, expected] of table) assert.strictEqual(refusedTags(body, e), expected, name)
  })
})
