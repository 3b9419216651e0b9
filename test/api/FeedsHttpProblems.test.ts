/**
 * decisions.md "Errors" and "Servers, modules, permissions" at the feed writes, over HTTP on a real
 * database: a create or PATCH body is judged by every check at once — its schema (an option out of
 * its rule, a repeated list element, an unknown option, a missing field), the rules across fields and
 * the checks against the source and the webhook — in one 400, exactly the union of what each part
 * alone gets; nothing is written on any 400. The access check comes first: a bad body to a module
 * the user may not use, or to a server they may not manage, is 403; to an unknown server, 404. The
 * body's framing answers as before (malformed JSON 400, a media type not JSON 415, U+0000 400, 413).
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ALICE_ID, BOT1_ID, BOT2_ID, channelId, S2_ID, S3_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { call, feedsOverHttp, modulePath, webhookCreations } from "./FeedsHttpFixtures.ts"

const MODULES = ["photo", "forum", "rss", "streaming", "microblog", "video"] as const
const UNKNOWN_SERVER = "399999999999999999"
const VOICE = channelId(1, 5)
const TEXT = channelId(1, 2)

interface Item {
  readonly code: string
  readonly message: string
  readonly additionalProperties?: { readonly path?: string; readonly in?: string }
}
type Answer = { readonly status: number; readonly body: any }

const errorsOf = (r: Answer): ReadonlyArray<Item> => r.body.errors
const pathsOf = (r: Answer) => errorsOf(r).map((e) => e.additionalProperties?.path)
/** An error as a comparable key: the same problem has the same code, message and path wherever it comes from. */
const keyOf = (e: Item) => JSON.stringify([e.code, e.message, e.additionalProperties?.path ?? null])

/** What is stored: feeds and audit entries (row counts), and the webhooks the sandbox created. */
const stored = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ feeds: number; audit: number }>`
    SELECT (SELECT count(*)::int FROM feeds) AS feeds, (SELECT count(*)::int FROM audit_entries) AS audit`
  return { feeds: row!.feeds, audit: row!.audit, webhooks: yield* webhookCreations }
})

/**
 * `combined` answers one 400 with exactly the errors of `parts` together (each a 400 on its own):
 * every check ran on the combined body, none was dropped, none reported twice; nothing was written.
 */
const assertUnion = (label: string, parts: ReadonlyArray<Effect.Effect<Answer, never, any>>, combined: Effect.Effect<Answer, never, any>) =>
  Effect.gen(function*() {
    const expected: Array<string> = []
    for (const part of parts) {
      const r = yield* part
      assert.strictEqual(r.status, 400, `${label}, part: ${JSON.stringify(r.body)}`)
      expected.push(...errorsOf(r).map(keyOf))
    }
    const before = yield* stored
    const r = yield* combined
    assert.strictEqual(r.status, 400, `${label}: ${JSON.stringify(r.body)}`)
    assert.sameMembers(errorsOf(r).map(keyOf), expected, `${label}: ${JSON.stringify(r.body)}`)
    assert.strictEqual(errorsOf(r).length, expected.length, `${label}: each problem once`)
    assert.deepStrictEqual(yield* stored, before, `${label}: nothing written`)
    return r
  })

const post = (m: string, body: unknown) => call("POST", `${modulePath(m)}/feeds`, body)
const patch = (m: string, id: string, body: unknown) => call("PATCH", `${modulePath(m)}/feeds/${id}`, body)

feedsOverHttp("every problem of a write in one answer", (it) => {
  describe("create", () => {
    it.effect("schema problems with an unknown source and a bad webhook → one 400 with all of them, each at its path", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const missing = `${app.url}/sandbox/rss/missing.xml`
        const good = `${app.url}${RSS_PATHS.rss}`
        // rss: a value out of its rule and a repeated word, beside a feed that does not exist and a voice channel.
        const r = yield* assertUnion("rss", [
          post("rss", { feed_identifier: good, webhook_channel: TEXT, webhook_options: { nsfw: "sometimes", filter_words: ["cat", " Cat"] } }),
          post("rss", { feed_identifier: missing, webhook_channel: VOICE })
        ], post("rss", { feed_identifier: missing, webhook_channel: VOICE, webhook_options: { nsfw: "sometimes", filter_words: ["cat", " Cat"] } }))
        assert.sameMembers(pathsOf(r), ["feed_identifier", "webhook_channel", "webhook_options.nsfw", "webhook_options.filter_words[1]"])

        // streaming: repeated events and a repeated game, beside an unknown user and a webhook_url that is none.
        yield* assertUnion("streaming", [
          post("streaming", { feed_identifier: "speedrunsam", webhook_channel: TEXT, webhook_options: { filter_event: ["live", "live"], filter_game: ["Minecraft", "minecraft "] } }),
          post("streaming", { feed_identifier: "nosuchstreamer", webhook_url: "not a url" })
        ], post("streaming", { feed_identifier: "nosuchstreamer", webhook_url: "not a url", webhook_options: { filter_event: ["live", "live"], filter_game: ["Minecraft", "minecraft "] } }))

        // A well-formed option is still checked against the source when another option fails its schema.
        const games = yield* assertUnion("streaming games", [
          post("streaming", { feed_identifier: "speedrunsam", webhook_channel: TEXT, webhook_options: { filter_event: ["live", "live"] } }),
          post("streaming", { feed_identifier: "speedrunsam", webhook_channel: TEXT, webhook_options: { filter_game: ["No Such Game"] } })
        ], post("streaming", { feed_identifier: "speedrunsam", webhook_channel: TEXT, webhook_options: { filter_event: ["live", "live"], filter_game: ["No Such Game"] } }))
        assert.sameMembers(pathsOf(games), ["webhook_options.filter_event[1]", "webhook_options.filter_game[0]"])

        // forum: an unknown flair of the forum beside an option of another module and a value out of its rule.
        yield* assertUnion("forum", [
          post("forum", { feed_identifier: "SandboxNews", webhook_channel: TEXT, webhook_options: { filter_event: ["post"], filter_mode: "XOR" } }),
          post("forum", { feed_identifier: "SandboxNews", webhook_channel: TEXT, webhook_options: { filter_flair: ["Tech", "Gossip"] } })
        ], post("forum", { feed_identifier: "SandboxNews", webhook_channel: TEXT, webhook_options: { filter_event: ["post"], filter_mode: "XOR", filter_flair: ["Tech", "Gossip"] } }))

        // photo, microblog, video: an unknown option and a key the body may not carry, beside an unknown user and a channel of no server.
        const known = { photo: "sandboxphotos", microblog: "gatewaynews", video: "Sandbox Channel" } as const
        for (const m of ["photo", "microblog", "video"] as const) {
          yield* assertUnion(m, [
            post(m, { feed_identifier: known[m], webhook_channel: TEXT, colour: "red", webhook_options: { bogus: true } }),
            post(m, { feed_identifier: "nosuchuserxyz", webhook_channel: "399999999999999901" })
          ], post(m, { feed_identifier: "nosuchuserxyz", webhook_channel: "399999999999999901", colour: "red", webhook_options: { bogus: true } }))
        }
      }))

    it.effect("a field that fails its schema is left out of its own checks only: the rules across fields and the webhook still run", () =>
      Effect.gen(function*() {
        // No feed_identifier and no webhook at all: both reported (the rule across fields did not run before).
        const none = yield* post("rss", { webhook_options: { filter_mode: "XOR" } })
        assert.strictEqual(none.status, 400, JSON.stringify(none.body))
        assert.sameMembers(pathsOf(none), ["feed_identifier", "webhook_channel", "webhook_options.filter_mode"])
        const rule = errorsOf(none).find((e) => e.additionalProperties?.path === "webhook_channel")!
        // The same words as when the rule is the body's only problem.
        const alone = yield* post("rss", { feed_identifier: `${(yield* TestApp).url}${RSS_PATHS.rss}` })
        assert.deepStrictEqual(errorsOf(alone), [rule])

        // An empty feed_identifier (its schema) beside a voice channel (the server's channels).
        const empty = yield* assertUnion("empty identifier", [
          post("video", { feed_identifier: "", webhook_channel: TEXT }),
          post("video", { feed_identifier: "Sandbox Channel", webhook_channel: VOICE })
        ], post("video", { feed_identifier: "", webhook_channel: VOICE }))
        assert.sameMembers(pathsOf(empty), ["feed_identifier", "webhook_channel"])

        // A malformed webhook_url (not a text) beside an unknown source: the source is still asked.
        const url = yield* post("microblog", { feed_identifier: "nosuchuserxyz", webhook_url: 42 })
        assert.strictEqual(url.status, 400, JSON.stringify(url.body))
        assert.sameMembers(pathsOf(url), ["feed_identifier", "webhook_url"])
        assert.include(errorsOf(url).find((e) => e.additionalProperties?.path === "feed_identifier")!.message, "nosuchuserxyz")
      }))

    it.effect("a body that is not an object still gets its one problem; a valid body still creates (also with a charset)", () =>
      Effect.gen(function*() {
        for (const body of ["a string", null, [], 5]) {
          const r = yield* post("rss", body)
          assert.strictEqual(r.status, 400, JSON.stringify(r.body))
          assert.deepStrictEqual(errorsOf(r).map((e) => e.message), ["The body is invalid: expected an object"])
        }
        const token = yield* tokenOf(ALICE_ID)
        const app = yield* TestApp
        const res = yield* raw({
          method: "POST",
          token,
          headers: { "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({ feed_identifier: `${app.url}${RSS_PATHS.atom}`, webhook_channel: TEXT })
        }, `${modulePath("rss")}/feeds`)
        const created = JSON.parse(yield* Effect.promise(() => res.text()))
        assert.strictEqual(res.status, 200, JSON.stringify(created))
        assert.strictEqual((yield* call("DELETE", `${modulePath("rss")}/feeds/${created.id}`)).status, 200)
      }))
  })

  describe("PATCH", () => {
    it.effect("schema problems with an unknown game or flair → one 400 with all of them; the feed is unchanged", () =>
      Effect.gen(function*() {
        const streaming = yield* post("streaming", { feed_identifier: "speedrunsam", webhook_channel: TEXT, webhook_options: { filter_game: ["Minecraft"] } })
        assert.strictEqual(streaming.status, 200, JSON.stringify(streaming.body))
        const id = streaming.body.id as string
        const r = yield* assertUnion("streaming patch", [
          patch("streaming", id, { webhook_options: { filter_mode: "AND", filter_event: ["live", "live"] }, feed_identifier: "x" }),
          patch("streaming", id, { webhook_options: { filter_game: ["Minecraft", "No Such Game"] } })
        ], patch("streaming", id, { webhook_options: { filter_mode: "AND", filter_event: ["live", "live"], filter_game: ["Minecraft", "No Such Game"] }, feed_identifier: "x" }))
        assert.sameMembers(pathsOf(r), ["webhook_options.filter_mode", "webhook_options.filter_event[1]", "webhook_options.filter_game[1]", "feed_identifier"])

        const forum = yield* post("forum", { feed_identifier: "SandboxNews", webhook_channel: TEXT })
        assert.strictEqual(forum.status, 200, JSON.stringify(forum.body))
        yield* assertUnion("forum patch", [
          patch("forum", forum.body.id, { webhook_options: { nsfw: "maybe", "webhook-name": "x".repeat(33) } }),
          patch("forum", forum.body.id, { webhook_options: { filter_flair: ["Gossip"] } })
        ], patch("forum", forum.body.id, { webhook_options: { nsfw: "maybe", "webhook-name": "x".repeat(33), filter_flair: ["Gossip"] } }))

        const list = yield* call("GET", `${modulePath("streaming")}/feeds`)
        const feed = list.body.feeds.find((f: { id: string }) => f.id === id)
        assert.deepStrictEqual(feed, streaming.body)
        for (const [m, feedId] of [["streaming", id], ["forum", forum.body.id]] as const) {
          assert.strictEqual((yield* call("DELETE", `${modulePath(m)}/feeds/${feedId}`)).status, 200)
        }
      }))

    it.effect("a bad body to a feed that does not exist → 404, as a good one (the feed first, as forms do)", () =>
      Effect.gen(function*() {
        for (const body of [{ webhook_options: 5 }, { webhook_options: { bogus: 1 } }, {}]) {
          const r = yield* patch("rss", "999999", body)
          assert.strictEqual(r.status, 404, JSON.stringify(r.body))
          assert.strictEqual(errorsOf(r)[0]!.code, "Not Found")
        }
      }))
  })

  describe("access before the body", () => {
    const badBodies: ReadonlyArray<readonly [string, string]> = [
      ["POST", JSON.stringify({ feed_identifier: "", webhook_options: { filter_words: ["a", "a"], bogus: 1 } })],
      ["POST", JSON.stringify("a string")],
      ["POST", "{\"feed_identifier\":"],
      ["PATCH", JSON.stringify({ webhook_options: { nsfw: "maybe" }, webhook_url: "x" })],
      ["PATCH", JSON.stringify({})],
      ["PATCH", "{"]
    ]
    const send = (userId: string, method: string, path: string, body: string, contentType = "application/json") =>
      Effect.gen(function*() {
        const res = yield* raw({ method, token: yield* tokenOf(userId), headers: { "content-type": contentType }, body }, path)
        return { status: res.status, body: JSON.parse(yield* Effect.promise(() => res.text())) }
      })
    const expectEvery = (userId: string, bot: string, server: string, status: number, label: string) =>
      Effect.gen(function*() {
        const before = yield* stored
        for (const m of MODULES) {
          for (const [method, body] of badBodies) {
            const path = `${modulePath(m, server, bot)}/feeds${method === "PATCH" ? "/1" : ""}`
            const r = yield* send(userId, method, path, body)
            assert.strictEqual(r.status, status, `${label}: ${method} ${m} ${body} → ${JSON.stringify(r.body)}`)
            assert.strictEqual(errorsOf(r)[0]!.code, status === 403 ? "Forbidden" : "Not Found", label)
          }
        }
        assert.deepStrictEqual(yield* stored, before, `${label}: nothing written`)
      })

    it.effect("a module whose available is false → 403 (ALICE's feed modules in S2: MANAGE_GUILD only)", () =>
      expectEvery(ALICE_ID, BOT1_ID, S2_ID, 403, "module not available"))

    it.effect("a server the user may not manage → 403 (ALICE a plain member of S3, not in S4)", () =>
      Effect.gen(function*() {
        yield* expectEvery(ALICE_ID, BOT2_ID, S3_ID, 403, "plain member")
        yield* expectEvery(ALICE_ID, BOT2_ID, S4_ID, 403, "not a member")
      }))

    it.effect("an unknown server, or one the bot is not in → 404", () =>
      Effect.gen(function*() {
        yield* expectEvery(ALICE_ID, BOT2_ID, UNKNOWN_SERVER, 404, "unknown server")
        yield* expectEvery(ALICE_ID, BOT1_ID, S4_ID, 404, "bot 1 not in S4")
      }))

    it.effect("the body's framing answers as before: not JSON 415 (even before access), U+0000 400 at its path", () =>
      Effect.gen(function*() {
        const feeds = `${modulePath("rss")}/feeds`
        const unavailable = `${modulePath("rss", S2_ID, BOT1_ID)}/feeds`
        const valid = JSON.stringify({ feed_identifier: "x", webhook_channel: TEXT })
        for (const type of ["text/plain", "application/merge-patch+json", "application/x-www-form-urlencoded"]) {
          for (const path of [feeds, unavailable]) {
            const r = yield* send(ALICE_ID, "POST", path, valid, type)
            assert.strictEqual(r.status, 415, `${type} ${path}: ${JSON.stringify(r.body)}`)
            assert.strictEqual(errorsOf(r)[0]!.code, "Unsupported Media Type")
            const p = yield* send(ALICE_ID, "PATCH", `${path}/1`, JSON.stringify({ webhook_options: {} }), type)
            assert.strictEqual(p.status, 415, `${type} PATCH ${path}: ${JSON.stringify(p.body)}`)
          }
        }
        // An empty body under another media type: the framework's 415, before access, as before.
        for (const path of [feeds, unavailable]) {
          const r = yield* send(ALICE_ID, "POST", path, "", "text/plain")
          assert.strictEqual(r.status, 415, `empty text/plain ${path}: ${JSON.stringify(r.body)}`)
        }
        // Malformed JSON: a 400 that says so, on a module the user may use.
        for (const [method, path] of [["POST", feeds], ["PATCH", `${feeds}/1`]] as const) {
          const r = yield* send(ALICE_ID, method, path, "{\"webhook_options\":")
          assert.strictEqual(r.status, 400, JSON.stringify(r.body))
          assert.deepStrictEqual(errorsOf(r), [{ code: "Bad Request", message: "The body is not valid JSON: send a JSON object." }])
        }
        // U+0000 is refused at its path, with the body's other schema problems.
        const before = yield* stored
        const nul = yield* post("microblog", { feed_identifier: "sandbox\u0000bird", webhook_channel: TEXT, webhook_options: { nsfw: "x" } })
        assert.strictEqual(nul.status, 400, JSON.stringify(nul.body))
        assert.sameMembers(pathsOf(nul), ["feed_identifier", "webhook_options.nsfw"])
        const nulPatch = yield* patch("microblog", "1", { webhook_options: { custom_header: "a\u0000" } })
        assert.strictEqual(nulPatch.status, 400, JSON.stringify(nulPatch.body))
        assert.deepStrictEqual(pathsOf(nulPatch), ["webhook_options.custom_header"])
        // Over 1 MiB: 413.
        const big = yield* send(ALICE_ID, "POST", feeds, JSON.stringify({ feed_identifier: "x".repeat(1024 * 1024 + 1), webhook_channel: TEXT }))
        assert.strictEqual(big.status, 413, JSON.stringify(big.body))
        assert.deepStrictEqual(yield* stored, before, "nothing written")
      }))
  })
})
