/**
 * delivery.md §10's options over HTTP: each input rule's 400 names the option; valid values are
 * stored and returned like the others (and survive a PATCH), absent ones at their defaults.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { channelId, roleId, S1_ID, THREADS } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { TestApp } from "../utils/TestApp.ts"
import { assertBad, call, feedsOverHttp, modulePath } from "./FeedsHttpFixtures.ts"

const S1_THREAD = THREADS[0]!.id
const S2_THREAD = THREADS[1]!.id

feedsOverHttp("posting options (delivery.md §10)", (it) => {
  describe("input rules", () => {
    const post = (options: Record<string, unknown>, channel = channelId(1, 2)) =>
      Effect.gen(function*() {
        const url = `${(yield* TestApp).url}${RSS_PATHS.atom}`
        return yield* call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channel, webhook_options: options })
      })

    it.effect("each rule's 400 names the option", () =>
      Effect.gen(function*() {
        assertBad(yield* post({ mention_roles: ["320000000000000999"] }), "webhook_options.mention_roles[0]", "unknown role")
        assertBad(yield* post({ mention_roles: [S1_ID] }), "webhook_options.mention_roles[0]", "@everyone")
        assertBad(yield* post({ mention_roles: [roleId(1, 1), roleId(1, 1)] }), "webhook_options.mention_roles[1]", "repeat")
        assertBad(
          yield* post({ mention_roles: Array.from({ length: 11 }, (_, i) => roleId(1, i + 1)) }),
          "webhook_options.mention_roles",
          "more than 10"
        )
        // A role of another server is not one of this server's.
        assertBad(yield* post({ mention_roles: [roleId(2, 1)] }), "webhook_options.mention_roles[0]", "other server's role")
        assertBad(yield* post({ embed_color: "red" }), "webhook_options.embed_color", "colour")
        assertBad(yield* post({ embed_color: "#12345" }), "webhook_options.embed_color", "short colour")
        assertBad(yield* post({ thread_id: S2_THREAD }), "webhook_options.thread_id", "other server's thread")
        assertBad(yield* post({ thread_id: "399999999999999999" }), "webhook_options.thread_id", "unknown thread")
        assertBad(yield* post({ thread_id: channelId(1, 3) }), "webhook_options.thread_id", "a channel, not a thread")
        assertBad(yield* post({ thread_id: S1_THREAD }, channelId(1, 3)), "webhook_options.thread_id", "thread of another channel")
        assertBad(yield* post({ crosspost: true }), "webhook_options.crosspost", "crosspost in a text channel")
        assertBad(yield* post({ forum_thread_name: "" }), "webhook_options.forum_thread_name", "empty thread name")
        assertBad(yield* post({ forum_tags: ["News", "news"] }), "webhook_options.forum_tags[1]", "repeated tag")
        assertBad(yield* post({ split: "yes" }), "webhook_options.split", "split")
        assertBad(yield* post({ embed: 1 }), "webhook_options.embed", "embed")
        // Every problem in one answer.
        const all = yield* post({ mention_roles: ["320000000000000999"], crosspost: true, embed_color: "red" })
        assert.strictEqual(all.body.errors.length, 3, JSON.stringify(all.body))
      }))

    it.effect("valid values are stored and returned; absent ones at their defaults; a PATCH is checked the same way", () =>
      Effect.gen(function*() {
        const options = {
          mention_roles: [roleId(1, 1), roleId(1, 2)],
          embed: true,
          embed_color: "#00ff7f",
          thread_id: S1_THREAD,
          forum_thread_name: "%title%",
          forum_tags: ["News"],
          split: true
        }
        const r = yield* post(options)
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.deepInclude(r.body.webhook_options, { ...options, crosspost: false })
        const listed = yield* call("GET", `${modulePath("rss")}/feeds`)
        const again = listed.body.feeds.find((f: { id: string }) => f.id === r.body.id)
        assert.deepStrictEqual(again.webhook_options, r.body.webhook_options)
        const bad = yield* call("PATCH", `${modulePath("rss")}/feeds/${r.body.id}`, { webhook_options: { crosspost: true } })
        assertBad(bad, "webhook_options.crosspost", "PATCH crosspost in a text channel")
        const cleared = yield* call("PATCH", `${modulePath("rss")}/feeds/${r.body.id}`, { webhook_options: { embed: false } })
        assert.strictEqual(cleared.status, 200, JSON.stringify(cleared.body))
        assert.strictEqual(cleared.body.webhook_options.mention_roles, null)
        assert.strictEqual(cleared.body.webhook_options.thread_id, null)
        // An announcement channel, where the seeded bot holds MANAGE_MESSAGES: crosspost accepted.
        const news = yield* post({ crosspost: true }, channelId(1, 4))
        assert.strictEqual(news.status, 200, JSON.stringify(news.body))
        assert.strictEqual(news.body.webhook_options.crosspost, true)
      }))
  })
})
