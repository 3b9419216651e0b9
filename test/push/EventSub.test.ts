/**
 * Streaming feeds pushed by Twitch EventSub (delivery.md §9) in the sandbox, on each database:
 * the gateway subscribes to `stream.online` and `stream.offline` and answers the
 * `webhook_callback_verification` challenge; a signed `stream.online` posts the live message once;
 * a forged signature, a message older than 10 minutes and a repeated message id are refused or
 * ignored and post nothing; after a `revocation`, polling takes over at once (a live stream that
 * was never notified is posted by the poll the revocation triggers). The streaming interval is
 * 10 minutes and the backstop 30: no regular poll runs during the test.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { channelId, CHANNEL_INDEX } from "../../src/sandbox/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { baselined, createFeed, eventually, publish, sandbox } from "../insight/InsightFixtures.ts"
import { hook, hubState, postedWith, pushApp, statuses } from "./PushFixtures.ts"

const PUSHED = "41000002" // pixelpainter
const REVOKED = "41000003" // speedrunsam

const enabled = (user: string) =>
  eventually(hubState, (s) => s.eventsub.filter((e) => e.broadcaster_user_id === user && e.status === "enabled").length === 2, `${user}: both subscriptions enabled`)

for (const db of dbKinds) {
  layer(pushApp(db, { pollIntervalSecondsByModule: { streaming: 600 } }), { excludeTestServices: true, timeout: 90_000 })(`EventSub (${db})`, (it) => {
    it.effect("challenge answered; a signed stream.online posts once; forged, late and repeated messages post nothing", () =>
      Effect.gen(function*() {
        const feed = yield* createFeed("streaming", { feed_identifier: PUSHED, webhook_channel: channelId(1, CHANNEL_INDEX.text) })
        yield* baselined("streaming", feed.id)
        const state = yield* enabled(PUSHED)
        assert.deepStrictEqual(state.eventsub.filter((e) => e.broadcaster_user_id === PUSHED).map((e) => e.type).sort(), ["stream.offline", "stream.online"])

        // The default live message names the channel.
        const title = "PixelPainter"
        yield* publish("streaming", PUSHED, { type: "live", title: `Pushed stream ${db}`, game: "Art" })
        const send = (extra: Record<string, unknown>) =>
          sandbox("POST", "/sandbox/push/eventsub/send", { broadcaster_user_id: PUSHED, type: "stream.online", ...extra })

        assert.deepStrictEqual(statuses(yield* send({ forge: true })), [403], "a forged signature")
        assert.deepStrictEqual(statuses(yield* send({ age_seconds: 11 * 60 })), [403], "older than 10 minutes")
        yield* Effect.sleep("2 seconds")
        assert.deepStrictEqual(yield* postedWith(title), [], "nothing posted by refused messages")

        const valid = yield* send({})
        assert.deepStrictEqual(statuses(valid), [204])
        yield* eventually(postedWith(title), (ms) => ms.length >= 1, "the live message posted")

        const messageId = (valid.body as { deliveries: Array<{ message_id: string }> }).deliveries[0]!.message_id
        const repeated = yield* send({ message_id: messageId })
        assert.deepStrictEqual(statuses(repeated), [200], "a repeated id is acknowledged and dropped")
        const replayed = yield* sandbox("POST", "/sandbox/push/replay", {})
        assert.strictEqual((replayed.body as { status: number; answer: string }).status, 200)
        assert.include((replayed.body as { answer: string }).answer, "repeated message id")
        yield* Effect.sleep("2 seconds")
        assert.strictEqual((yield* postedWith(title)).length, 1, "posted exactly once")

        // Bad input at the callback: the envelope.
        const callback = state.eventsub.find((e) => e.broadcaster_user_id === PUSHED)!.callback
        const path = callback.slice(callback.indexOf("/hooks/"))
        const noHeaders = yield* hook("POST", path, { body: "{}", headers: { "content-type": "application/json" } })
        assert.strictEqual(noHeaders.status, 400)
        assert.deepInclude(JSON.parse(noHeaders.text).errors[0], { code: "Bad Request" })
        const unknown = yield* hook("POST", "/hooks/eventsub?hook=nobody", { body: "{}", headers: { "content-type": "application/json" } })
        assert.strictEqual(unknown.status, 404)
        assert.include(unknown.type, "application/json")
      }), 60_000)

    it.effect("revocation: polling takes over at once", () =>
      Effect.gen(function*() {
        const feed = yield* createFeed("streaming", { feed_identifier: REVOKED, webhook_channel: channelId(1, CHANNEL_INDEX.text2) })
        yield* baselined("streaming", feed.id)
        yield* enabled(REVOKED)
        const title = "SpeedrunSam"
        yield* publish("streaming", REVOKED, { type: "live", title: `Never notified ${db}`, game: "Art" })
        yield* Effect.sleep("2 seconds")
        assert.deepStrictEqual(yield* postedWith(title), [], "pushed sources are not polled meanwhile")

        const revoked = yield* sandbox("POST", "/sandbox/push/eventsub/revoke", { broadcaster_user_id: REVOKED, reason: "authorization_revoked" })
        assert.deepStrictEqual(statuses(revoked), [204, 204])
        yield* eventually(postedWith(title), (ms) => ms.length === 1, "the poll after the revocation posted the stream")
        // A forged revocation changes nothing: it is refused like any forged message.
        const forged = yield* sandbox("POST", "/sandbox/push/eventsub/send", { broadcaster_user_id: PUSHED, type: "stream.offline", forge: true })
        assert.deepStrictEqual(statuses(forged), [403])
      }), 60_000)
  })
}
