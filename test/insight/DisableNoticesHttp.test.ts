/**
 * Disable notices in the sandbox (delivery.md §8; issue #15 item 4): a feed whose webhook was
 * deleted is disabled at its next post, and its creator gets one direct message from the bot
 * (server, feed, reason, how to fix) through the Discord client; a second feed of the same user
 * disabled within the hour gets no second message (it waits, to be grouped into the next). The
 * workers sweep every poll interval (1 s here).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOB_ID, BOT2_TOKEN, channelId, CHANNEL_INDEX } from "../../src/sandbox/Seed.ts"
import { noticeContent } from "../../src/services/delivery/DisableNotices.ts"
import type { OpenNotice } from "../../src/services/delivery/DisableNotices.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { baselined, call, createFeed, eventually, modulePath, publish, sandbox } from "./InsightFixtures.ts"

const API = "/sandbox/discord/api/v10"

/** Deletes every webhook of the channel, as a server admin would (the bot's token: a seeded sandbox value). */
const deleteWebhooksOf = (channel: string) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const headers = { authorization: `Bot ${BOT2_TOKEN}`, "user-agent": "insight-test" }
    const hooks = yield* Effect.promise(() => fetch(`${app.url}${API}/channels/${channel}/webhooks`, { headers }).then((r) => r.json()))
    for (const hook of hooks as Array<{ id: string }>) {
      const r = yield* Effect.promise(() => fetch(`${app.url}${API}/webhooks/${hook.id}`, { method: "DELETE", headers }))
      assert.isTrue(r.ok, `delete ${hook.id}: ${r.status}`)
    }
  })

const dms = (userId: string) =>
  Effect.map(sandbox("GET", `/sandbox/discord/dms?user_id=${userId}`), (r) =>
    (r.body as { messages: Array<{ id: string; bot_id: string; body: { content: string; allowed_mentions?: unknown } }> }).messages)

const status = (id: string) => Effect.map(call("GET", `${modulePath("rss")}/feeds/${id}/status`), (r) => r.body)

describe("noticeContent", () => {
  const notice = (id: string, reason: string): OpenNotice => ({
    id,
    reason,
    feedId: id,
    feed: { module: "rss", botId: "b", serverId: "s", identifier: `https://example.com/${id}.xml` },
    creatorId: "u"
  })
  it("one feed, or several grouped in one message: the server, each feed, its reason, how to fix", () => {
    const one = noticeContent(() => "Sandbox One", [notice("7", "The webhook is gone.")])
    assert.strictEqual(one.split("\n")[0], "Your feed was disabled, so it posts nothing until it is fixed:")
    assert.include(one, "• rss feed 7 (\"https://example.com/7.xml\") on the server \"Sandbox One\": The webhook is gone.")
    assert.include(one, "edit the feed to re-enable it")
    const many = noticeContent(() => "S", [notice("7", "A."), notice("8", "B.")])
    assert.strictEqual(many.split("\n").length, 4)
    assert.strictEqual(many.split("\n")[0], "2 of your feeds were disabled, so they post nothing until they are fixed:")
    const long = noticeContent(() => "S", Array.from({ length: 40 }, (_, i) => notice(String(i), "x".repeat(100))))
    assert.isAtMost([...long].length, 2000)
    assert.isTrue(long.endsWith("…"))
  })
})

for (const db of dbKinds) {
  layer(
    // The disables this test provokes are logged (warnings): kept, and checked.
    TestApp.layer({ capabilities: { db }, config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } } }).pipe(
      Layer.provideMerge(CapturedLogs.layer)
    ),
    { excludeTestServices: true, timeout: 90_000 }
  )(`disable notices in the sandbox (${db})`, (it) => {
    it.effect("a deleted webhook: the feed disabled, exactly one DM to its creator; a second disable within the hour: none", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* publish("rss", "insight-notice", { type: "post", title: "Before" })
        const url = `${app.url}/sandbox/rss/insight-notice.xml`
        const first = yield* createFeed("rss", { feed_identifier: url, webhook_channel: channelId(1, CHANNEL_INDEX.text) })
        const second = yield* createFeed("rss", { feed_identifier: url, webhook_channel: channelId(1, CHANNEL_INDEX.text2) })
        yield* baselined("rss", first.id)
        assert.deepStrictEqual(yield* dms(ALICE_ID), [])

        yield* deleteWebhooksOf(channelId(1, CHANNEL_INDEX.text))
        yield* publish("rss", "insight-notice", { type: "post", title: "After the first webhook went" })
        yield* eventually(status(first.id), (s) => s.state === "disabled", "the first feed disabled")
        const got = yield* eventually(dms(ALICE_ID), (ms) => ms.length >= 1, "the DM")
        assert.strictEqual(got.length, 1)
        const content = got[0]!.body.content
        assert.include(content, `rss feed ${first.id} ("${url}") on the server "Sandbox One"`)
        assert.include(content, "The chat webhook no longer exists")
        assert.include(content, "edit the feed to re-enable it")
        assert.notInclude(content, `rss feed ${second.id}`)
        assert.deepStrictEqual(got[0]!.body.allowed_mentions, { parse: [] })
        assert.deepStrictEqual(yield* dms(BOB_ID), [], "only the creator")

        yield* deleteWebhooksOf(channelId(1, CHANNEL_INDEX.text2))
        yield* publish("rss", "insight-notice", { type: "post", title: "After the second webhook went" })
        yield* eventually(status(second.id), (s) => s.state === "disabled", "the second feed disabled")
        yield* Effect.sleep("3 seconds") // three sweeps
        assert.strictEqual((yield* dms(ALICE_ID)).length, 1, "one DM per user per hour")
        // The operator's log: each disable once.
        const disabled = (yield* logged("feed disabled")).map((l) => l.annotations["feed"])
        assert.sameMembers(disabled, [first.id, second.id], JSON.stringify(disabled))
      }))
  })
}
