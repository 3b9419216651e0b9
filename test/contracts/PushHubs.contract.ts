/**
 * The PushHubs contract: what the push service relies on from the platforms' push endpoints
 * (delivery.md §9), on every layer (the live client against the sandbox's WebSub hub and EventSub
 * twin, the memory layer). A deployment without them has neither; the WebSub hub takes a subscribe
 * (and a renewal, and an unsubscribe) for a channel's feed; EventSub creates a subscription with a
 * new id each time, holds it until it is deleted, and deleting an unknown id is no error; a refusal
 * is a PushHubError with the hub's status, whose message never carries the secret. The hubs'
 * verification at the callback is the hubs' part (test/push); the callbacks here lead nowhere.
 * Outages and time-outs belong to the live client's own tests.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { Layer } from "effect"
import { PushHubs, youtubeTopic } from "../../src/services/push/PushHubs.ts"
import type { PushHubError } from "../../src/services/push/PushHubs.ts"

export interface PushHubsFixture<R> {
  /** Subscribe requests (renewals included) the WebSub hub received for the topic. */
  readonly subscribeRequests: (topic: string) => Effect.Effect<number, unknown, R>
  /** The ids of the EventSub subscriptions the hub holds. */
  readonly eventsubIds: Effect.Effect<ReadonlyArray<string>, unknown, R>
  /** The same layer for a deployment configured with neither hub. */
  readonly unconfigured: Layer.Layer<PushHubs, unknown>
}

const CALLBACK = "http://127.0.0.1:9/hooks/websub?hook=contract"
const SECRET = "contract-secret-0123456789"

const refusal = (e: PushHubError): { tag: string; status: number | undefined; namesSecret: boolean } => ({ tag: e._tag, status: e.status, namesSecret: e.message.includes(SECRET) })

export const pushHubsContract = <R, E>(name: string, hubsLayer: Layer.Layer<PushHubs | R, E>, fixture: PushHubsFixture<R>) =>
  layer(hubsLayer, { excludeTestServices: true, timeout: "60 seconds" })(`PushHubs contract (${name})`, (it) => {
    it.effect("a deployment without the hubs has neither", () =>
      Effect.gen(function*() {
        const hubs = yield* Effect.provide(PushHubs.use(Effect.succeed), fixture.unconfigured)
        assert.isTrue(Option.isNone(hubs.websub))
        assert.isTrue(Option.isNone(hubs.eventsub))
      }))

    it.effect("WebSub: a subscribe, its renewal and an unsubscribe are taken; the hub counts the subscribes of the topic", () =>
      Effect.gen(function*() {
        const websub = Option.getOrThrow((yield* PushHubs).websub)
        const topic = youtubeTopic("UCcontract00000000000001")
        assert.strictEqual(yield* fixture.subscribeRequests(topic), 0)
        const ask = (mode: "subscribe" | "unsubscribe") =>
          websub.request({ mode, topic, callback: CALLBACK, secret: Redacted.make(SECRET), leaseSeconds: 600 })
        yield* ask("subscribe")
        assert.strictEqual(yield* fixture.subscribeRequests(topic), 1)
        yield* ask("subscribe")
        assert.strictEqual(yield* fixture.subscribeRequests(topic), 2, "a renewal is a subscribe again")
        yield* ask("unsubscribe")
        assert.strictEqual(yield* fixture.subscribeRequests(topic), 2)
        assert.strictEqual(yield* fixture.subscribeRequests(youtubeTopic("UCcontract00000000000002")), 0, "per topic")
      }))

    it.effect("WebSub: a topic that is not a channel's feed, or a callback that is not http(s), is refused with 400", () =>
      Effect.gen(function*() {
        const websub = Option.getOrThrow((yield* PushHubs).websub)
        const refused = (topic: string, callback: string) =>
          Effect.map(Effect.flip(websub.request({ mode: "subscribe", topic, callback, secret: Redacted.make(SECRET), leaseSeconds: 600 })), refusal)
        const expected = { tag: "PushHubError", status: 400, namesSecret: false }
        assert.deepStrictEqual(yield* refused("https://news.test/feed.xml", CALLBACK), expected)
        assert.deepStrictEqual(yield* refused(youtubeTopic("UCcontract00000000000003"), "ftp://127.0.0.1/hook"), expected)
        assert.deepStrictEqual(yield* refused(youtubeTopic("UCcontract00000000000003"), "not a url"), expected)
        assert.strictEqual(yield* fixture.subscribeRequests(youtubeTopic("UCcontract00000000000003")), 0, "nothing was taken")
      }))

    it.effect("EventSub: each create a new id, held until deleted; deleting again or an unknown id is no error", () =>
      Effect.gen(function*() {
        const eventsub = Option.getOrThrow((yield* PushHubs).eventsub)
        const before = yield* fixture.eventsubIds
        const ask = (type: "stream.online" | "stream.offline", callback: string) =>
          eventsub.create({ type, broadcasterUserId: "41000001", callback, secret: Redacted.make(SECRET) })
        const online = yield* ask("stream.online", "http://127.0.0.1:9/hooks/eventsub?hook=contract-1")
        const offline = yield* ask("stream.offline", "http://127.0.0.1:9/hooks/eventsub?hook=contract-2")
        assert.isTrue(online.length > 0 && offline.length > 0)
        assert.notStrictEqual(online, offline)
        assert.notInclude(before, online)
        assert.includeMembers([...(yield* fixture.eventsubIds)], [online, offline])
        yield* eventsub.remove(online)
        const after = yield* fixture.eventsubIds
        assert.notInclude(after, online)
        assert.include(after, offline, "only that one")
        yield* eventsub.remove(online)
        yield* eventsub.remove("00000000-0000-4000-8000-000000000000")
        yield* eventsub.remove(offline)
        assert.deepStrictEqual([...(yield* fixture.eventsubIds)].sort(), [...before].sort())
      }))

    it.effect("EventSub: a broadcaster that is not an id, or a secret under 10 or over 100 characters, is refused with 400", () =>
      Effect.gen(function*() {
        const eventsub = Option.getOrThrow((yield* PushHubs).eventsub)
        const before = yield* fixture.eventsubIds
        const refused = (broadcasterUserId: string, secret: string) =>
          Effect.map(Effect.flip(eventsub.create({ type: "stream.online", broadcasterUserId, callback: CALLBACK, secret: Redacted.make(secret) })), refusal)
        const expected = { tag: "PushHubError", status: 400, namesSecret: false }
        assert.deepStrictEqual(yield* refused("sandboxstreamer", SECRET), expected)
        assert.deepStrictEqual(yield* refused("41000001", "short"), { ...expected })
        assert.deepStrictEqual(yield* refused("41000001", SECRET.repeat(5)), { ...expected })
        assert.deepStrictEqual([...(yield* fixture.eventsubIds)].sort(), [...before].sort(), "nothing was created")
      }))
  })
