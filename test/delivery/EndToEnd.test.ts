/**
 * Feed delivery end to end, as a user does it (issue #14, delivery.md §1–§3, §7): the gateway with
 * its worker (ROLE=all) on a real database, polling every second; a feed created over HTTP; an
 * item published to the sandbox source; the message in the sandbox's webhook inbox, exactly as the
 * webhook got it (content, username, avatar_url, allowed_mentions). What the source served before
 * the feed (the baseline) is never posted; a filtered item is not posted.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { microblogProfileImage } from "../../src/sandbox/sources/Microblog.ts"
import { MICROBLOG_USERS } from "../../src/sandbox/sources/Seed.ts"
import { ALICE_ID, BOT2_ID, channelId, S1_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { eventually } from "../utils/Eventually.ts"

const modulePath = (m: string) => `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/${m}`

interface Message {
  readonly id: string
  readonly webhook_id: string
  readonly channel_id: string
  readonly body: Record<string, unknown>
  readonly at: string
}

/** A request to the sandbox (not the gateway's API): JSON in, JSON out. */
const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", "user-agent": "e2e-test" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

const publish = (module: string, identifier: string, event: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* sandbox("POST", `/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`, event)
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { readonly id: string; readonly url: string }
  })

const inbox = (channel: string) =>
  Effect.map(sandbox("GET", `/sandbox/discord/messages?channel_id=${channel}`), (r) => (r.body as { messages: Array<Message> }).messages)

/** Requests the sandbox's RSS feeds answered (the seeded ones and those created by publishing). */
const rssFetches = Effect.map(sandbox("GET", "/sandbox/stats"), (r) =>
  Object.entries((r.body as { calls: Record<string, number> }).calls)
    .filter(([route]) => route.startsWith("GET /sandbox/rss/"))
    .reduce((n, [, c]) => n + c, 0))

const createFeed = (m: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const res = yield* raw({
      method: "POST",
      token: yield* tokenOf(ALICE_ID),
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    }, `${modulePath(m)}/feeds`)
    const feed = yield* json(res)
    assert.strictEqual(res.status, 200, JSON.stringify(feed))
    return feed as { readonly id: string }
  })

const status = (m: string, id: string) =>
  Effect.flatMap(
    Effect.flatMap(tokenOf(ALICE_ID), (token) => raw({ token }, `${modulePath(m)}/feeds/${id}/status`)),
    json
  )

/** Polls `f` every 250 ms until `done` holds; fails after `ms` with the last value. */
/**
 * The feed's first poll (the baseline) is done: from now on, new items are posted. Then one more
 * second: feed dates have whole seconds, and an item dated in the second the feed was created in
 * is taken for one from before it (the rule of delivery/Select.ts compares to the millisecond).
 */
const baselined = (m: string, id: string) =>
  eventually(status(m, id), (s) => s.last_poll_at !== null, `${m} feed ${id}: the first poll`).pipe(
    Effect.andThen(Effect.sleep("1 second"))
  )

for (const db of dbKinds) {
  layer(
    // A loaded machine makes a poll time out now and then (a warning, retried): kept, not printed.
    TestApp.layer({ capabilities: { db }, config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } } }).pipe(
      Layer.provideMerge(CapturedLogs.layer)
    ),
    { excludeTestServices: true, timeout: 90_000 }
  )(`delivery end to end (${db})`, (it) => {
    it.effect("rss, default options: create over HTTP → publish in the sandbox → exactly this message in the inbox", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const name = `e2e-${db}`
        const channel = channelId(1, 2)
        yield* publish("rss", name, { type: "post", title: "Served before the feed existed" })
        const feed = yield* createFeed("rss", { feed_identifier: `${app.url}/sandbox/rss/${name}.xml`, webhook_channel: channel })
        yield* baselined("rss", feed.id)

        yield* publish("rss", name, { type: "post", title: "Hello from the sandbox", url: "https://example.com/e2e/hello", author: "Ada" })
        const messages = yield* eventually(inbox(channel), (ms) => ms.length >= 1, "the message")
        // Give a duplicate or the baseline item the time of a few more polls to show up (none may).
        yield* Effect.sleep("3 seconds")
        const all = yield* inbox(channel)
        assert.strictEqual(all.length, 1, JSON.stringify(all))
        assert.deepStrictEqual(messages[0]!.body, {
          content: `New item found in Sandbox feed ${name}!\nhttps://example.com/e2e/hello`,
          username: `Sandbox feed ${name}`,
          allowed_mentions: { parse: [] }
        })
        const s = yield* status("rss", feed.id)
        assert.deepInclude(s, { state: "active", delivered: 1 })

        // Its last feed deleted, the source is not polled any more. A poll already under way may finish
        // (and plan its successor); the chain ends at the first poll that finds no feed: it clears the
        // source's next poll (a source gone entirely is not polled either). Only then is the count taken (however long that poll took).
        const source = Option.getOrThrow(yield* DeliveryStore.use((store) => store.sourceOfFeed(feed.id)))
        const deleted = yield* raw({ method: "DELETE", token: yield* tokenOf(ALICE_ID) }, `${modulePath("rss")}/feeds/${feed.id}`)
        assert.strictEqual(deleted.status, 200)
        yield* eventually(
          DeliveryStore.use((store) => store.source(source.id)),
          (s) => Option.isNone(s) || s.value.nextPollAt === null,
          "the source of a deleted feed: no next poll planned",
          12_000
        )
        const before = yield* rssFetches
        assert.isAbove(before, 1, "the baseline and the delivery fetched the feed")
        yield* Effect.sleep("4 seconds")
        assert.strictEqual(yield* rssFetches, before, "the source of a deleted feed is still polled")
      }))

    it.effect("rss with options: a custom header with %url%, webhook-name, a word filter (the other item skipped)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const name = `e2e-options-${db}`
        const channel = channelId(1, 3)
        yield* publish("rss", name, { type: "post", title: "Already there" })
        const feed = yield* createFeed("rss", {
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_channel: channel,
          webhook_options: {
            custom_header: "%title% by %author%: %url% @everyone",
            "webhook-name": "Newsroom",
            filter_words: ["launch"]
          }
        })
        yield* baselined("rss", feed.id)

        yield* publish("rss", name, { type: "post", title: "A boring update", url: "https://example.com/e2e/boring" })
        yield* publish("rss", name, { type: "post", title: "Big launch today", url: "https://example.com/e2e/launch", author: "Grace" })
        const s = yield* eventually(status("rss", feed.id), (s) => s.delivered === 1 && s.skipped >= 1, "one posted, one skipped")
        assert.strictEqual(s.skipped, 1)
        const messages = yield* inbox(channel)
        assert.strictEqual(messages.length, 1, JSON.stringify(messages))
        assert.deepStrictEqual(messages[0]!.body, {
          content: "Big launch today by Grace: https://example.com/e2e/launch @everyone",
          username: "Newsroom",
          // The header's @everyone is text: allowed_mentions pings no one.
          allowed_mentions: { parse: [] }
        })
      }))

    it.effect("microblog: the profile image as avatar_url, the screen name as username", () =>
      Effect.gen(function*() {
        const user = MICROBLOG_USERS[0]!
        const channel = channelId(1, 4)
        const before = (yield* inbox(channel)).length
        const feed = yield* createFeed("microblog", { feed_identifier: user.username, webhook_channel: channel })
        yield* baselined("microblog", feed.id)

        const post = yield* publish("microblog", user.username, { type: "post", text: "Shipping the delivery engine" })
        const messages = yield* eventually(inbox(channel), (ms) => ms.length > before, "the microblog message")
        assert.deepStrictEqual(messages.slice(before).map((m) => m.body), [{
          content: `New tweet from ${user.name}!\n${post.url}`,
          username: user.username,
          avatar_url: microblogProfileImage(user),
          allowed_mentions: { parse: [] }
        }])
      }))
  })
}
