/**
 * Issue #12's open ends at the feeds routes, over HTTP on a real database (PostgreSQL when the run
 * has one, where an id beyond int8 made the query fail):
 * - a canonical path id that names nothing is a 404 at any size (`:feedId` on all six modules,
 *   `:formId`, `:serverId`, `:appClientId`), never a 400, 500 or 503;
 * - a body with a schema problem and a repeated list element gets both in one 400, each at its path.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, BOT2_ID, channelId, S1_ID } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const DB = dbKinds.includes("postgres") ? "postgres" as const : "pglite" as const
const MODULES = ["photo", "forum", "rss", "streaming", "microblog", "video"] as const
const modulePath = (m: string, server = S1_ID, bot = BOT2_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/${m}`

/** Canonical, naming nothing: int8's largest, one past it, the issue's example, and a long one. */
const TOO_LARGE = ["9223372036854775807", "9223372036854775808", "99999999999999999999999", "9".repeat(400)]

interface Answer {
  readonly status: number
  readonly body: { readonly errors: ReadonlyArray<{ code: string; message: string; additionalProperties?: { path?: string } }> }
}

const call = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method, token: yield* tokenOf(ALICE_ID) }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    const text = yield* Effect.promise(() => res.text())
    return { status: res.status, body: JSON.parse(text), contentType: res.headers.get("content-type") } as Answer & { contentType: string | null }
  })

const assertNotFound = (r: Answer & { contentType: string | null }, label: string) => {
  assert.strictEqual(r.status, 404, `${label}: ${JSON.stringify(r.body)}`)
  assert.match(r.contentType ?? "", /^application\/json/, label)
  assert.strictEqual(r.body.errors[0]!.code, "Not Found", label)
}

const paths = (r: Answer) => r.body.errors.map((e) => e.additionalProperties?.path)

layer(TestApp.layer({ capabilities: { db: DB } }), { excludeTestServices: true, timeout: 60_000 })(`feeds edges (${DB})`, (it) => {
  it.effect("a canonical :feedId beyond int8 → 404 on every feed route of the six modules", () =>
    Effect.gen(function*() {
      for (const m of MODULES) {
        for (const id of TOO_LARGE) {
          const feed = `${modulePath(m)}/feeds/${id}`
          assertNotFound(yield* call("GET", `${feed}/status`), `${m} GET status ${id}`)
          assertNotFound(yield* call("PATCH", feed, { webhook_options: {} }), `${m} PATCH ${id}`)
          assertNotFound(yield* call("DELETE", feed), `${m} DELETE ${id}`)
        }
        // The routes still answer: the module's list is there, and a non-canonical id is still a 400.
        assert.strictEqual((yield* call("GET", `${modulePath(m)}/feeds`)).status, 200)
        const bad = yield* call("DELETE", `${modulePath(m)}/feeds/0${TOO_LARGE[2]}`)
        assert.strictEqual(bad.status, 400, JSON.stringify(bad.body))
        assert.deepStrictEqual(paths(bad), ["feedId"])
      }
    }))

  it.effect("a real feed is still found by its id (the guard lets every int8 id through)", () =>
    Effect.gen(function*() {
      const url = `${(yield* TestApp).url}${RSS_PATHS.rss}`
      const created = yield* call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channelId(1, 2) })
      assert.strictEqual(created.status, 200, JSON.stringify(created.body))
      const id = (created.body as unknown as { id: string }).id
      assert.strictEqual((yield* call("GET", `${modulePath("rss")}/feeds/${id}/status`)).status, 200)
      assert.strictEqual((yield* call("DELETE", `${modulePath("rss")}/feeds/${id}`)).status, 200)
      assertNotFound(yield* call("DELETE", `${modulePath("rss")}/feeds/${id}`), "deleted")
    }))

  it.effect("canonical but too large :formId, :serverId, :appClientId → 404", () =>
    Effect.gen(function*() {
      for (const id of TOO_LARGE) {
        const forms = `${modulePath("forms", S1_ID, BOT1_ID)}/${id}`
        assertNotFound(yield* call("GET", forms), `GET form ${id}`)
        assertNotFound(yield* call("PATCH", forms, { title: "x" }), `PATCH form ${id}`)
        assertNotFound(yield* call("DELETE", forms), `DELETE form ${id}`)
        assertNotFound(yield* call("GET", `/api/v1/bots/${BOT1_ID}/servers/${id}/modules/forms`), `serverId ${id}`)
        assertNotFound(yield* call("GET", `/api/v1/bots/${BOT1_ID}/servers/${id}`), `server ${id}`)
        assertNotFound(yield* call("DELETE", `${modulePath("rss", id)}/feeds/1`), `serverId ${id} on a feed route`)
        assertNotFound(yield* call("GET", `/api/v1/bots/${id}/servers`), `appClientId ${id}`)
        assertNotFound(yield* call("GET", `${modulePath("rss", S1_ID, id)}/feeds`), `appClientId ${id} on a feed route`)
      }
    }))

  it.effect("create: a schema problem and a repeated element → one 400 with both, each at its path", () =>
    Effect.gen(function*() {
      const url = `${(yield* TestApp).url}${RSS_PATHS.rss}`
      const rss = yield* call("POST", `${modulePath("rss")}/feeds`, {
        feed_identifier: url,
        webhook_channel: channelId(1, 2),
        webhook_options: { custom_header: "x".repeat(1025), filter_words: ["cat", " Cat", "dog"], nsfw: "sometimes" }
      })
      assert.strictEqual(rss.status, 400, JSON.stringify(rss.body))
      assert.sameMembers(paths(rss), ["webhook_options.custom_header", "webhook_options.filter_words[1]", "webhook_options.nsfw"])
      const repeat = rss.body.errors.find((e) => e.additionalProperties?.path === "webhook_options.filter_words[1]")!
      assert.strictEqual(repeat.code, "Bad Request")
      assert.include(repeat.message, "webhook_options.filter_words[1]")
      assert.include(repeat.message, "repeated (already at [0])")

      // A missing required field beside repeats in two lists (events and game names).
      const streaming = yield* call("POST", `${modulePath("streaming")}/feeds`, {
        webhook_channel: channelId(1, 2),
        webhook_options: { filter_event: ["live", "live"], filter_game: ["Minecraft", "minecraft "] }
      })
      assert.strictEqual(streaming.status, 400, JSON.stringify(streaming.body))
      assert.sameMembers(paths(streaming), ["feed_identifier", "webhook_options.filter_event[1]", "webhook_options.filter_game[1]"])
    }))

  it.effect("patch: a schema problem and a repeated element → one 400 with both; the feed is unchanged", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", `${modulePath("video")}/feeds`, {
        feed_identifier: "Sandbox Channel",
        webhook_channel: channelId(1, 2),
        webhook_options: { filter_words: ["cat"] }
      })
      assert.strictEqual(created.status, 200, JSON.stringify(created.body))
      const feed = created.body as unknown as { id: string }
      const patched = yield* call("PATCH", `${modulePath("video")}/feeds/${feed.id}`, {
        webhook_options: { filter_event: ["added", "updated", "added"], filter_mode: "XOR", "webhook-name": 7 }
      })
      assert.strictEqual(patched.status, 400, JSON.stringify(patched.body))
      // filter_event has 2 entries at most: that check and the repeat are both reported.
      assert.include(paths(patched), "webhook_options.filter_event[2]")
      assert.include(paths(patched), "webhook_options.filter_mode")
      assert.isTrue(paths(patched).some((p) => p?.includes("webhook-name")), JSON.stringify(patched.body))
      const list = yield* call("GET", `${modulePath("video")}/feeds`)
      const stored = (list.body as unknown as { feeds: ReadonlyArray<{ id: string; webhook_options: { filter_words: unknown } }> }).feeds
      assert.deepStrictEqual(stored.find((f) => f.id === feed.id)?.webhook_options.filter_words, ["cat"])
    }))
})
