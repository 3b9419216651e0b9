/**
 * The preview's own rules on top of the worker's selection (services/feeds/FeedPreview.ts): the newest
 * items first and at most 10; what the log says of an item seen before; the per-poll cap as the
 * worker applies it (oldest first, over every new item, not only the ten shown); a source never
 * polled (its baseline posts nothing); a disabled feed; the message of a skipped item.
 */
import { assert, describe, it } from "@effect/vitest"
import { render } from "../../src/services/delivery/render/Render.ts"
import type { SelectFeed } from "../../src/services/delivery/render/Select.ts"
import { BASELINE_REASON, buildPreview, disabledReason, SEEN_BEFORE } from "../../src/services/feeds/FeedPreview.ts"
import type { PreviewInput } from "../../src/services/feeds/FeedPreview.ts"
import { rss } from "../delivery/ItemFixtures.ts"

const NOW = new Date("2024-05-01T12:00:00Z")
const minutesAgo = (n: number) => new Date(NOW.getTime() - n * 60_000)
/** Item i is i minutes old: item 0 is the newest. */
const items = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    rss({ id: `g${i}`, title: i % 2 === 0 ? `Launch ${i}` : `Other ${i}`, url: `https://news.test/${i}`, publishedAt: minutesAgo(i), eventAt: minutesAgo(i) }))

const feed: SelectFeed & { state: "active"; reason: null } = {
  id: "1",
  createdAt: new Date("2024-01-01T00:00:00Z"),
  options: { filter_words: ["launch"] },
  defaults: { name: "Display" },
  state: "active",
  reason: null
}

const input = (o: Partial<PreviewInput> = {}): PreviewInput => ({
  items: items(3),
  seen: new Set(),
  history: new Map(),
  baselined: true,
  feed,
  limits: { now: NOW, maxItemAgeHours: 24, maxItemsPerPoll: 5 },
  ...o
})

describe("buildPreview", () => {
  it("newest first, verdicts and reasons of the worker's rules, the message of every item (skipped ones too)", () => {
    const got = buildPreview(input())
    assert.deepStrictEqual(got.items.map((i) => [i.id, i.verdict, i.reasons]), [
      ["g0", "post", ["filter_words: \"launch\" in the title"]],
      ["g1", "skip", ["filter_words: no element in the title"]],
      ["g2", "post", ["filter_words: \"launch\" in the title"]]
    ])
    const skipped = got.items[1]!
    const message = render(items(3)[1]!, feed.options, feed.defaults)
    assert.deepStrictEqual(skipped.message, {
      content: message.content,
      username: message.username ?? null,
      avatar_url: message.avatar_url ?? null,
      allowed_mentions: { parse: [] }
    }, "the body the webhook gets, allowed_mentions included")
    assert.deepInclude(skipped, { title: "Other 1", url: "https://news.test/1", published_at: minutesAgo(1).toISOString() })
  })

  it("at most 10, and the cap counted as the worker counts it: oldest first over every new item", () => {
    const got = buildPreview(input({ items: items(14) }))
    assert.deepStrictEqual(got.items.map((i) => i.id), Array.from({ length: 10 }, (_, i) => `g${i}`))
    // The seven "Launch" items (even i, oldest first: 12, 10, 8, 6, 4, 2, 0): the five oldest are posted.
    const verdicts = Object.fromEntries(got.items.map((i) => [i.id, [i.verdict, i.reasons[0]]]))
    assert.deepStrictEqual(verdicts["g8"], ["post", "filter_words: \"launch\" in the title"])
    assert.deepStrictEqual(verdicts["g4"], ["post", "filter_words: \"launch\" in the title"])
    assert.deepStrictEqual(verdicts["g2"], ["skip", "over the per-poll cap of 5"])
    assert.deepStrictEqual(verdicts["g0"], ["skip", "over the per-poll cap of 5"])
  })

  it("seen before: what the log says (sent, failed), else that it was there before the feed could post it", () => {
    const got = buildPreview(input({
      seen: new Set(["g0", "g1", "g2"]),
      history: new Map([
        ["g0", { state: "sent", reason: null }],
        ["g1", { state: "failed", reason: "the chat platform refused the message (400: bad)" }]
      ])
    }))
    assert.deepStrictEqual(got.items.map((i) => [i.verdict, i.reasons]), [
      ["skip", ["already posted"]],
      ["skip", ["already tried: the chat platform refused the message (400: bad)"]],
      ["skip", [SEEN_BEFORE]]
    ])
  })

  it("a source never polled posts nothing (its baseline); a disabled feed says why, then what else stood in the way", () => {
    assert.deepStrictEqual(
      buildPreview(input({ baselined: false })).items.map((i) => [i.verdict, i.reasons]),
      [["skip", [BASELINE_REASON]], ["skip", [BASELINE_REASON]], ["skip", [BASELINE_REASON]]]
    )
    const why = "The chat webhook no longer exists (404 Unknown Webhook, code 10015)."
    const disabled = buildPreview(input({ feed: { ...feed, state: "disabled", reason: why } as PreviewInput["feed"] }))
    assert.deepStrictEqual(disabled.items.map((i) => [i.verdict, i.reasons]), [
      ["skip", [disabledReason(why)]],
      ["skip", [disabledReason(why), "filter_words: no element in the title"]],
      ["skip", [disabledReason(why)]]
    ])
    assert.strictEqual(disabledReason(why), `the feed is disabled: ${why}`)
  })

  it("an empty source: no items", () => {
    assert.deepStrictEqual(buildPreview(input({ items: [] })), { items: [] })
  })
})
