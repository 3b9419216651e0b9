/**
 * delivery.md §10's forum feeds end to end: the gateway with its worker on a real database, a feed
 * created over HTTP on the webhook of a forum channel (its `webhook_url` from GET /sandbox), items
 * published to the sandbox source, and exactly what the forum's webhook got: one post per item,
 * named by `forum_thread_name` (cut to 100), tagged with the ids of the forum's tags that
 * `forum_tags` names (unknown names ignored), an embed as for any message; the preview shows the
 * same message; the tags follow the forum when the feed is edited or tested, and a post refused
 * for a tag deleted since is posted untagged.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOT2_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { eventually } from "../utils/Eventually.ts"

const modulePath = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss`

interface Message {
  readonly id: string
  readonly thread_id?: string
  readonly body: Record<string, unknown>
}
interface Forum {
  readonly id: string
  readonly tags: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly webhook_url: string
}

const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

/** The forum of server S1 as GET /sandbox lists it. */
const forumOfS1 = Effect.map(sandbox("GET", "/sandbox"), (r) =>
  (r.body.servers as Array<{ id: string; forums: Array<Forum> }>).find((s) => s.id === S1_ID)!.forums[0]!)

const webhookIdOf = (forum: Forum) => forum.webhook_url.split("/webhooks/")[1]!.split("/")[0]!

const publish = (name: string, event: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* sandbox("POST", `/sandbox/sources/rss/${encodeURIComponent(name)}/events`, event)
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { readonly id: string; readonly url: string }
  })

const posts = (forum: Forum) =>
  Effect.map(sandbox("GET", `/sandbox/discord/messages?webhook_id=${webhookIdOf(forum)}`), (r) => r.body.messages as Array<Message>)

const api = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const res = yield* raw({
      method,
      token: yield* tokenOf(ALICE_ID),
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    }, `${modulePath}${path}`)
    return { status: res.status, body: yield* json(res) }
  })

const createFeed = (body: Record<string, unknown>) =>
  Effect.map(api("POST", "/feeds", body), (r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body as { readonly id: string }
  })

const baselined = (id: string) =>
  eventually(Effect.map(api("GET", `/feeds/${id}/status`), (r) => r.body), (s) => s.last_poll_at !== null, `feed ${id}: the first poll`).pipe(
    Effect.andThen(Effect.sleep("1 second"))
  )

/** Publishes an item and waits for the forum post it makes. */
const postOf = (forum: Forum, name: string, event: Record<string, unknown>) =>
  Effect.gen(function*() {
    const before = (yield* posts(forum)).length
    yield* publish(name, event)
    const after = yield* eventually(posts(forum), (ms) => ms.length > before, `the post of ${JSON.stringify(event["title"])}`)
    assert.strictEqual(after.length, before + 1, "one post per item")
    return after.at(-1)!
  })

const tagIds = (forum: Forum, ...names: Array<string>) => names.map((n) => forum.tags.find((t) => t.name === n)!.id)

for (const db of dbKinds) {
  layer(
    TestApp.layer({ capabilities: { db }, config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } } }).pipe(
      Layer.provideMerge(CapturedLogs.layer)
    ),
    { excludeTestServices: true, timeout: 120_000 }
  )(`delivery end to end, forum feeds (${db})`, (it) => {
    it.effect("one post per item: exactly this body, named from forum_thread_name, tagged with the named tags' ids (unknown names ignored), cut at 100; the preview shows the same", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const forum = yield* forumOfS1
        const name = `e2e-forum-${db}`
        yield* publish(name, { type: "post", title: "Served before the feed existed" })
        const feed = yield* createFeed({
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_url: forum.webhook_url,
          webhook_options: { forum_thread_name: "%title% — by %author%", forum_tags: ["security", "News", "Nope"] }
        })
        yield* baselined(feed.id)

        const first = yield* postOf(forum, name, { type: "post", title: "Launch", author: "Ada", url: "https://example.com/forum/launch" })
        assert.strictEqual(first.thread_id, first.id, "a post of its own: the post's id is its first message's")
        assert.deepStrictEqual(first.body, {
          content: `New item found in Sandbox feed ${name}!\nhttps://example.com/forum/launch`,
          username: `Sandbox feed ${name}`,
          allowed_mentions: { parse: [] },
          thread_name: "Launch — by Ada",
          // The forum's order (News, Release, Security), whatever the case and order of forum_tags.
          applied_tags: tagIds(forum, "News", "Security")
        })

        const long = "Ω".repeat(60) + " and a title that goes on past the hundred characters a post's name may have"
        const second = yield* postOf(forum, name, { type: "post", title: long, author: "Bo", url: "https://example.com/forum/long" })
        const threadName = String(second.body["thread_name"])
        assert.strictEqual([...threadName].length, 100)
        assert.strictEqual(threadName, [...`${long} — by Bo`].slice(0, 99).join("") + "…")
        assert.strictEqual(second.thread_id, second.id)
        assert.notStrictEqual(second.thread_id, first.thread_id, "another post")

        const log = (yield* api("GET", `/feeds/${feed.id}/deliveries`)).body.deliveries as Array<Record<string, unknown>>
        assert.deepStrictEqual(log.map((d) => [d["state"], d["message_id"]]), [["sent", second.id], ["sent", first.id]])

        // The preview: what was sent, key for key (no avatar: null), newest first.
        const preview = (yield* api("GET", `/feeds/${feed.id}/preview`)).body.items as Array<{ message: Record<string, unknown> }>
        assert.deepStrictEqual(preview.slice(0, 2).map((i) => i.message), [second, first].map((m) => ({ avatar_url: null, ...m.body })))
      }))

    it.effect("only unknown tag names: the post is made without applied_tags; with embed: the §10 embed in the post, no URL appended", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const forum = yield* forumOfS1
        const name = `e2e-forum-embed-${db}`
        yield* publish(name, { type: "post", title: "Served before the feed existed" })
        const feed = yield* createFeed({
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_url: forum.webhook_url,
          webhook_options: { forum_tags: ["Nope", "Neither"], embed: true, embed_color: "#336699" }
        })
        yield* baselined(feed.id)
        const post = yield* postOf(forum, name, {
          type: "post",
          title: "Embedded",
          author: "Bea",
          text: "<p>Some <b>bold</b> words</p>",
          url: "https://example.com/forum/embedded"
        })
        const embed = (post.body["embeds"] as Array<Record<string, unknown>>)[0]!
        assert.deepStrictEqual(post.body, {
          content: `New item found in Sandbox feed ${name}!`,
          username: `Sandbox feed ${name}`,
          allowed_mentions: { parse: [] },
          embeds: [{
            title: "Embedded",
            url: "https://example.com/forum/embedded",
            description: "Some **bold** words",
            color: 0x336699,
            timestamp: embed["timestamp"],
            author: { name: "Bea" },
            footer: { text: `Sandbox feed ${name}` }
          }],
          thread_name: "Embedded"
        })
        assert.isFalse(Number.isNaN(Date.parse(String(embed["timestamp"]))))
        const preview = (yield* api("GET", `/feeds/${feed.id}/preview`)).body.items as Array<{ message: Record<string, unknown> }>
        assert.deepStrictEqual(preview[0]!.message, { avatar_url: null, ...post.body })
      }))

    it.effect("the forum's tags followed: a tag added counts from the test message (which opens a post too), one deleted meanwhile gives an untagged post, a PATCH reads them again", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const forum = yield* forumOfS1
        const name = `e2e-forum-tags-${db}`
        yield* publish(name, { type: "post", title: "Served before the feed existed" })
        const feed = yield* createFeed({
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_url: forum.webhook_url,
          webhook_options: { forum_tags: ["Release", "Events"] }
        })
        yield* baselined(feed.id)
        const [news, release, security] = forum.tags
        const setTags = (tags: ReadonlyArray<{ readonly id?: string; readonly name: string }>) =>
          Effect.map(sandbox("PUT", `/sandbox/discord/forums/${forum.id}/tags`, { tags }), (r) => {
            assert.strictEqual(r.status, 200, JSON.stringify(r.body))
            return r.body.tags as Array<{ id: string; name: string }>
          })
        // A moderator adds "Events": the feed read the forum before, so its next item is tagged Release only.
        const withEvents = yield* setTags([news!, release!, security!, { name: "Events" }])
        const events = withEvents[3]!.id
        const stale = yield* postOf(forum, name, { type: "post", title: "Before the test", url: "https://example.com/forum/a" })
        assert.deepStrictEqual(stale.body["applied_tags"], [release!.id])

        // The test message reads the forum again: its post has both, and so has the worker's next.
        const before = (yield* posts(forum)).length
        const tested = yield* api("POST", `/feeds/${feed.id}/test`)
        assert.strictEqual(tested.status, 200, JSON.stringify(tested.body))
        const testPost = (yield* posts(forum)).slice(before)
        assert.deepStrictEqual(testPost.map((m) => [m.id, m.thread_id, m.body["thread_name"], m.body["applied_tags"]]), [
          [tested.body.message_id, tested.body.message_id, "Before the test", [release!.id, events]]
        ])
        const fresh = yield* postOf(forum, name, { type: "post", title: "After the test", url: "https://example.com/forum/b" })
        assert.deepStrictEqual(fresh.body["applied_tags"], [release!.id, events])

        // "Release" deleted: the stored tags name it, the platform refuses that post; it is posted untagged.
        yield* setTags([news!, security!, { id: events, name: "Events" }])
        const untagged = yield* postOf(forum, name, { type: "post", title: "Release deleted", url: "https://example.com/forum/c" })
        assert.deepStrictEqual([untagged.body["thread_name"], untagged.body["applied_tags"]], ["Release deleted", undefined])
        const log = (yield* api("GET", `/feeds/${feed.id}/deliveries`)).body.deliveries as Array<Record<string, unknown>>
        assert.deepInclude(log[0]!, { state: "sent", message_id: untagged.id })
        assert.isNotEmpty(yield* logged("posted without them"))

        // A PATCH reads the forum again: Events alone from now on.
        const patched = yield* api("PATCH", `/feeds/${feed.id}`, { webhook_options: { forum_tags: ["Release", "Events"] } })
        assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        const after = yield* postOf(forum, name, { type: "post", title: "After the PATCH", url: "https://example.com/forum/d" })
        assert.deepStrictEqual(after.body["applied_tags"], [events])
      }))
  })
}
