/**
 * Streaming through the engine (issue #14 "Tests": game filter at stream start): the items a
 * streaming poll yields (test/sources/poll/Streaming.test.ts proves the grace and the flap: `live` once at
 * the start, `offline` once after the grace, both carrying the game the stream started with) go to
 * each feed of the channel by its own filter_game and filter_event, and what is skipped is logged
 * with the rule that decided.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { dbKinds } from "../utils/Db.ts"
import { deliveriesOf, dropSchemaAtEnd, inbox, insertFeed, newWebhook, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"
import { streaming } from "./ItemFixtures.ts"

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const engine = processLayer({ pgbossSchema: pgboss, poller })

  layer(Layer.provideMerge(engine, base), { excludeTestServices: true, timeout: "120 seconds" })(`streaming delivery on ${kind}`, (it) => {
    it.effect("filter_game decides by the game the stream started with, for its live and its offline; filter_event on top", () =>
      Effect.gen(function*() {
        const delivery = yield* DeliveryEngine
        const channel = `caster${randomBytes(3).toString("hex")}`
        const feeds = yield* Effect.forEach([
          { name: "chess only", options: { filter_game: ["743"] } },
          { name: "everything", options: {} },
          { name: "chess, live only", options: { filter_game: ["743"], filter_event: ["live"] } }
        ], (f) =>
          Effect.gen(function*() {
            const webhook = yield* newWebhook
            const feedId = yield* insertFeed({ module: "streaming", identifier: channel, webhook, options: f.options })
            return { ...f, webhook, feedId }
          }))
        const sourceId = yield* DeliveryScheduling.use((s) => s.attach("streaming", channel))
        script.serve(channel, [])
        assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")

        const stream = (id: string, event: "live" | "offline", gameId: string, game: string, age: number) =>
          streaming({ id: event === "live" ? id : `${id}:offline`, event, gameId, game, eventAt: minutesAgo(age), publishedAt: minutesAgo(age) })
        // A stream that started with chess (the poller reports that game on its offline too, whatever came later).
        const chessLive = stream("s1", "live", "743", "Chess", 20)
        const chessOffline = stream("s1", "offline", "743", "Chess", 10)
        // The next one starts with another game.
        const otherLive = stream("s2", "live", "509658", "Just Chatting", 5)
        const otherOffline = stream("s2", "offline", "509658", "Just Chatting", 1)
        let served: ReadonlyArray<ReturnType<typeof stream>> = []
        for (const next of [chessLive, chessOffline, otherLive, otherOffline]) {
          served = [...served, next]
          script.serve(channel, served)
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Delivered")
        }
        for (const f of feeds) yield* delivery.postWebhook(f.webhook.id)

        const posted = (f: (typeof feeds)[number]) =>
          Effect.map(inbox(f.webhook.id), (ms) => ms.map((m) => (m.body["content"] as string).split("\n")[0]))
        assert.deepStrictEqual(yield* posted(feeds[0]!), [
          ":red_circle: Now Live on Twitch: Caster | :video_game: Playing Chess.",
          "Stream Offline: Caster | :video_game: Playing Chess."
        ])
        assert.deepStrictEqual(yield* posted(feeds[1]!), [
          ":red_circle: Now Live on Twitch: Caster | :video_game: Playing Chess.",
          "Stream Offline: Caster | :video_game: Playing Chess.",
          ":red_circle: Now Live on Twitch: Caster | :video_game: Playing Just Chatting.",
          "Stream Offline: Caster | :video_game: Playing Just Chatting."
        ])
        assert.deepStrictEqual(yield* posted(feeds[2]!), [":red_circle: Now Live on Twitch: Caster | :video_game: Playing Chess."])

        const log = (f: (typeof feeds)[number]) => Effect.map(deliveriesOf(f.feedId), (rows) => rows.map((r) => [r.item_id, r.state, r.reason]))
        assert.deepStrictEqual(yield* log(feeds[0]!), [
          ["s1", "sent", null],
          ["s1:offline", "sent", null],
          ["s2", "skipped", "filter_game: the stream started with game 509658, not listed"],
          ["s2:offline", "skipped", "filter_game: the stream started with game 509658, not listed"]
        ])
        const chessLiveOnly = yield* log(feeds[2]!)
        assert.deepStrictEqual(chessLiveOnly.map(([id, state]) => [id, state]), [["s1", "sent"], ["s1:offline", "skipped"], ["s2", "skipped"], ["s2:offline", "skipped"]])
        assert.match(String(chessLiveOnly[1]![2]), /filter_event/)
      }))
  })
}
