/**
 * The webhook side of the sandbox chat platform (delivery.md §4, §7): executing a webhook (with and
 * without `wait`), the message inbox, Discord's per-webhook rate limit with real headers and 429s,
 * unknown / wrong-token / deleted webhooks, and faults on the execute route and the source routes
 * (a hang never records the message).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT2_TOKEN, SEED, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { assertWindow429, call, field } from "./SandboxCallFixtures.ts"
import type { Answer } from "./SandboxCallFixtures.ts"

const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const api = (path: string, init?: RequestInit) => call(`/sandbox/discord/api/v10${path}`, init)
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
const execute = (id: string, token: string, body: unknown, wait = true, headers: Record<string, string> = {}) =>
  postJson(`/sandbox/discord/api/v10/webhooks/${id}/${token}${wait ? "?wait=true" : ""}`, body, headers)
const fault = (body: unknown) =>
  Effect.gen(function*() {
    assert.strictEqual((yield* postJson("/sandbox/faults", body)).status, 200)
  })

interface InboxMessage {
  readonly id: string
  readonly webhook_id: string
  readonly channel_id: string
  readonly body: unknown
  readonly at: string
}
const inbox = (query = "") => Effect.map(call(`/sandbox/discord/messages${query}`), (a) => field(a.body, "messages") as Array<InboxMessage>)

/** A fresh webhook (its own rate-limit bucket) in S4's text channel. */
const newWebhook = (name: string) =>
  Effect.gen(function*() {
    const created = yield* postJson(`/sandbox/discord/api/v10/channels/${SEED.ids.textChannels.s4}/webhooks`, { name }, bot2)
    assert.strictEqual(created.status, 200, JSON.stringify(created.body))
    return { id: String(field(created.body, "id")), token: String(field(created.body, "token")) }
  })

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox webhooks and inbox", (it) => {
  it.effect("execute with wait answers the message with its id; the inbox has the exact body, oldest first", () =>
    Effect.gen(function*() {
      const body = {
        content: "New item found in Sandbox!\nhttps://example.com/1",
        username: "Sandbox feed",
        avatar_url: "https://example.com/a.png",
        allowed_mentions: { parse: [] }
      }
      const posted = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, body)
      assert.strictEqual(posted.status, 200, JSON.stringify(posted.body))
      const id = String(field(posted.body, "id"))
      assert.match(id, /^\d{17,20}$/)
      assert.deepInclude(posted.body as object, {
        type: 0,
        content: body.content,
        channel_id: SEED.ids.textChannels.s1,
        webhook_id: WEBHOOK_S1_ID
      })
      assert.strictEqual(field(field(posted.body, "author"), "username"), "Sandbox feed")
      assert.strictEqual(field(field(posted.body, "author"), "bot"), true)
      // Discord's per-webhook limit by default, 5 per 2 s: this first execute (the seeded webhook is
      // used nowhere else here) opens the webhook's window, and its headers state the bucket's size.
      assert.deepStrictEqual(
        ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset-after"].map((h) => posted.headers.get(h)),
        ["5", "4", "2.000"]
      )

      const second = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "no wait" }, false)
      assert.strictEqual(second.status, 204)
      assert.strictEqual(second.body, "")

      const messages = yield* inbox(`?webhook_id=${WEBHOOK_S1_ID}`)
      assert.strictEqual(messages.length, 2)
      assert.deepStrictEqual(
        { id: messages[0]!.id, webhook_id: messages[0]!.webhook_id, channel_id: messages[0]!.channel_id, body: messages[0]!.body },
        { id, webhook_id: WEBHOOK_S1_ID, channel_id: SEED.ids.textChannels.s1, body }
      )
      assert.deepStrictEqual(messages[1]!.body, { content: "no wait" })
      assert.isTrue(Date.parse(messages[0]!.at) <= Date.parse(messages[1]!.at))
      assert.match(messages[0]!.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.strictEqual((yield* inbox(`?channel_id=${SEED.ids.textChannels.s1}`)).length, 2)
      assert.deepStrictEqual(yield* inbox(`?channel_id=${SEED.ids.textChannels.s2}`), [])
    }))

  it.effect("unknown webhook 404 10015, wrong token 401 50027, deleted webhook 404 10015 from then on", () =>
    Effect.gen(function*() {
      const unknown = yield* execute("339999999999999999", "whatever", { content: "x" })
      assert.deepStrictEqual([unknown.status, unknown.body], [404, { message: "Unknown Webhook", code: 10015 }])
      const hook = yield* newWebhook("doomed")
      const wrong = yield* execute(hook.id, "not-the-token", { content: "x" })
      assert.deepStrictEqual([wrong.status, wrong.body], [401, { message: "Invalid Webhook Token", code: 50027 }])
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "before" })).status, 200)

      assert.strictEqual((yield* api(`/webhooks/${hook.id}`, { method: "DELETE", headers: bot2 })).status, 204)
      const gone = yield* execute(hook.id, hook.token, { content: "after" })
      assert.deepStrictEqual([gone.status, gone.body], [404, { message: "Unknown Webhook", code: 10015 }])

      const byToken = yield* newWebhook("deleted by token")
      assert.strictEqual((yield* api(`/webhooks/${byToken.id}/${byToken.token}`, { method: "DELETE" })).status, 204)
      assert.strictEqual((yield* execute(byToken.id, byToken.token, { content: "after" })).status, 404)
      assert.deepStrictEqual((yield* inbox(`?webhook_id=${hook.id}`)).map((m) => m.body), [{ content: "before" }])
    }))

  it.effect("Discord's message checks: empty 50006, content over 2,000 characters or a bad username 50035", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("checks")
      const empty = yield* execute(hook.id, hook.token, { username: "x" })
      assert.deepStrictEqual([empty.status, field(empty.body, "code")], [400, 50006])
      const long = yield* execute(hook.id, hook.token, { content: "a".repeat(2001) })
      assert.deepStrictEqual([long.status, field(long.body, "code")], [400, 50035])
      assert.isDefined(field(field(long.body, "errors"), "content"))
      const badName = yield* execute(hook.id, hook.token, { content: "x", username: "Discord bot" })
      assert.deepStrictEqual([badName.status, field(badName.body, "code")], [400, 50035])
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "😀".repeat(2000) })).status, 200, "2,000 characters")
    }))

  it.effect("faults on the execute route: 500 and 429 answered, nothing recorded; a hang never records the message", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("faulted")
      const other = yield* newWebhook("spared")
      const route = "POST /webhooks/{id}/{token}"
      yield* fault({ route, kind: "500" })
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "500" })).status, 500)
      yield* fault({ route, kind: "429", retry_after: 1.5 })
      const limited = yield* execute(hook.id, hook.token, { content: "429" })
      assert.deepStrictEqual([limited.status, field(limited.body, "retry_after")], [429, 1.5])

      yield* fault({ route, kind: "hang" })
      const server = yield* SandboxServer
      const outcome = yield* Effect.promise(() =>
        fetch(`${server.url}/sandbox/discord/api/v10/webhooks/${hook.id}/${hook.token}?wait=true`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content: "hang" }),
          signal: AbortSignal.timeout(300)
        }).then(() => "answered", (error: unknown) => (error instanceof Error ? error.name : "failed"))
      )
      assert.strictEqual(outcome, "TimeoutError")
      assert.deepStrictEqual(yield* inbox(`?webhook_id=${hook.id}`), [], "500, 429 and the hang posted nothing")

      // A fault for one webhook only (`path`): the other webhook is served.
      yield* fault({ route, kind: "500", path: `/sandbox/discord/api/v10/webhooks/${hook.id}/` })
      assert.strictEqual((yield* execute(other.id, other.token, { content: "spared" })).status, 200)
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "targeted" })).status, 500)
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "served" })).status, 200)
      assert.deepStrictEqual((yield* inbox(`?webhook_id=${hook.id}`)).map((m) => m.body), [{ content: "served" }])
    }))

  it.effect("faults on the source routes: feeds, Reddit listing, Helix streams, YouTube, X, Instagram", () =>
    Effect.gen(function*() {
      const helix = { headers: { "client-id": "c", authorization: "Bearer t" } }
      const bearer = { headers: { authorization: "Bearer t" } }
      const cases: ReadonlyArray<readonly [string, string, RequestInit | undefined]> = [
        ["GET /sandbox/rss/news.xml", "/sandbox/rss/news.xml", undefined],
        ["GET /sandbox/forum/r/{name}/new.json", "/sandbox/forum/r/SandboxGaming/new.json", bearer],
        ["GET /sandbox/streaming/helix/streams", "/sandbox/streaming/helix/streams?user_id=41000001", helix],
        ["GET /sandbox/video/youtube/v3/playlistItems", "/sandbox/video/youtube/v3/playlistItems?part=contentDetails&playlistId=UUsandbox000000000000001&key=k", undefined],
        ["GET /sandbox/video/youtube/v3/videos", "/sandbox/video/youtube/v3/videos?part=snippet&id=x&key=k", undefined],
        ["GET /sandbox/microblog/2/users/{id}/tweets", "/sandbox/microblog/2/users/1500000000000000001/tweets", bearer],
        ["GET /sandbox/photo/{nodeId}", "/sandbox/photo/17841400000000101?fields=id,username&access_token=t", undefined]
      ]
      for (const [route, path, init] of cases) {
        const plain = yield* call(path, init)
        assert.include([200, 404], plain.status, `${route}: ${JSON.stringify(plain.body)}`)
        yield* fault({ route, kind: "500" })
        assert.strictEqual((yield* call(path, init)).status, 500, route)
        yield* fault({ route, kind: "429", retry_after: 30 })
        const limited = yield* call(path, init)
        assert.deepStrictEqual([limited.status, limited.headers.get("retry-after")], [429, "30"], route)
        assert.strictEqual((yield* call(path, init)).status, plain.status, `${route} recovers`)
      }
      // A created feed: the route of every created feed, narrowed to one by `path`.
      assert.strictEqual((yield* postJson("/sandbox/sources/rss/faulty/events", { type: "post", title: "x" })).status, 201)
      yield* fault({ route: "GET /sandbox/rss/{feed}", kind: "hang", path: "/sandbox/rss/faulty.xml" })
      const server = yield* SandboxServer
      const outcome = yield* Effect.promise(() =>
        fetch(`${server.url}/sandbox/rss/faulty.xml`, { signal: AbortSignal.timeout(300) })
          .then(() => "answered", (error: unknown) => (error instanceof Error ? error.name : "failed"))
      )
      assert.strictEqual(outcome, "TimeoutError")
      assert.strictEqual((yield* call("/sandbox/rss/faulty.xml")).status, 200)
    }))
})

// The per-webhook bucket's size as the default's (5), its window long enough that the six calls
// below land in it on a slow, loaded machine.
const EXECUTE_WINDOW_MS = 5000
const LongWindow = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, {
    ...defaultSandboxConfig,
    buckets: { ...defaultSandboxConfig.buckets, "POST /webhooks/{id}/{token}": { limit: 5, windowMs: EXECUTE_WINDOW_MS } }
  }))
)

layer(LongWindow, { excludeTestServices: true })("sandbox webhook rate limit", (it) => {
  it.effect("Discord's per-webhook limit: 5 per window with X-RateLimit-* headers, then 429 with retry_after", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("limited")
      const other = yield* newWebhook("other")
      const answers: Array<Answer> = []
      // Clock reads around the first call (which opens the window) and the last (the 429).
      const reads: Array<readonly [number, number]> = []
      // With or without an Authorization header: the bucket is the webhook's.
      for (let i = 0; i < 6; i++) {
        const before = Date.now()
        answers.push(yield* execute(hook.id, hook.token, { content: `m${i}` }, true, i % 2 === 0 ? bot2 : {}))
        reads.push([before, Date.now()])
      }
      assert.deepStrictEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 429])
      assert.deepStrictEqual(answers.map((a) => a.headers.get("x-ratelimit-remaining")), ["4", "3", "2", "1", "0", "0"])
      for (const a of answers) assert.strictEqual(a.headers.get("x-ratelimit-limit"), "5")
      const bucket = answers[0]!.headers.get("x-ratelimit-bucket")
      assert.isNotNull(bucket)
      const limited = answers[5]!
      const { retryAfter } = assertWindow429(limited, reads, 5, EXECUTE_WINDOW_MS)
      assert.strictEqual((yield* inbox(`?webhook_id=${hook.id}`)).length, 5, "the refused message was never posted")

      const elsewhere = yield* execute(other.id, other.token, { content: "own bucket" })
      assert.strictEqual(elsewhere.status, 200)
      assert.strictEqual(elsewhere.headers.get("x-ratelimit-bucket"), bucket, "same route, another webhook: same hash, own count")
      assert.strictEqual(elsewhere.headers.get("x-ratelimit-remaining"), "4")

      yield* Effect.sleep(`${Math.ceil(retryAfter * 1000) + 50} millis`)
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "after the reset" })).status, 200)
    }))
})
