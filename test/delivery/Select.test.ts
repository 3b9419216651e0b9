/**
 * The selection of delivery.md §1 as a pure function: baseline, seen ids, the age cut-off, a feed
 * created after the item, the per-poll cap counted over the items that pass, oldest first, the
 * filters' reasons, what an item seen before reads as, and the message of each post.
 */
import { describe, expect, it } from "vitest"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import { render } from "../../src/services/delivery/render/Render.ts"
import type { ItemDecision, PastDelivery, SelectFeed, SelectLimits } from "../../src/services/delivery/render/Select.ts"
import { oldestFirst, planPoll, selectForFeed } from "../../src/services/delivery/render/Select.ts"
import { rss } from "./ItemFixtures.ts"

const NOW = new Date("2024-05-02T12:00:00.000Z")
const limits: SelectLimits = { now: NOW, maxItemAgeHours: 24, maxItemsPerPoll: 5 }
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000)
/** An rss item `id`, published `age` minutes before NOW. */
const item = (id: string, age: number, title = `Item ${id}`) =>
  rss({ id, title, url: `https://news.test/${id}`, publishedAt: minutesAgo(age), eventAt: minutesAgo(age) })
const feed = (o: Partial<SelectFeed> = {}): SelectFeed => ({ id: "1", createdAt: minutesAgo(7 * 24 * 60), options: {}, ...o })
/** Decisions as compact rows: [id, verdict, reasons]. */
const rows = (ds: ReadonlyArray<ItemDecision>) => ds.map((d) => [d.item.id, d.verdict, d.reasons] as const)

describe("selectForFeed: one feed's decisions", () => {
  const TABLE: ReadonlyArray<{
    readonly name: string
    readonly items: ReadonlyArray<Item>
    readonly seen?: ReadonlyArray<string>
    readonly feed?: Partial<SelectFeed>
    readonly limits?: Partial<SelectLimits>
    readonly expected: ReadonlyArray<readonly [string, "post" | "skip", ReadonlyArray<string>]>
  }> = [
    {
      name: "new items are posted, oldest first whatever the source's order",
      items: [item("c", 1), item("a", 30), item("b", 10)],
      expected: [["a", "post", []], ["b", "post", []], ["c", "post", []]]
    },
    {
      name: "equal times: the one the source lists later is the older (newest listed first); an id served twice counts once",
      items: [item("x", 5), item("y", 5), item("x", 1)],
      expected: [["y", "post", []], ["x", "post", []]]
    },
    {
      name: "the age cut-off: older than FEED_MAX_ITEM_AGE_HOURS is skipped, just younger posted",
      items: [item("old", 24 * 60 + 1), item("young", 24 * 60 - 1)],
      expected: [["old", "skip", ["older than 24 h"]], ["young", "post", []]]
    },
    {
      name: "the cut-off follows the setting",
      items: [item("a", 90), item("b", 30)],
      limits: { maxItemAgeHours: 1 },
      expected: [["a", "skip", ["older than 1 h"]], ["b", "post", []]]
    },
    {
      name: "a feed created after an item skips it (it starts at its creation)",
      items: [item("before", 20), item("after", 5)],
      feed: { createdAt: minutesAgo(10) },
      expected: [["before", "skip", ["from before the feed was created"]], ["after", "post", []]]
    },
    {
      name: "an item dated in the second the feed was created (feed dates have whole seconds) is not before it",
      items: [item("same-second", 10), item("second-before", 10 + 1 / 60)],
      feed: { createdAt: new Date(minutesAgo(10).getTime() + 700) },
      expected: [["second-before", "skip", ["from before the feed was created"]], ["same-second", "post", []]]
    },
    {
      name: "too old and from before the feed: the age is the reason",
      items: [item("ancient", 3 * 24 * 60)],
      feed: { createdAt: minutesAgo(60) },
      expected: [["ancient", "skip", ["older than 24 h"]]]
    },
    {
      name: "the cap: the 5 oldest of 7 are posted, the rest skipped and named",
      items: [7, 6, 5, 4, 3, 2, 1].map((age) => item(`n${age}`, age)),
      expected: [
        ["n7", "post", []],
        ["n6", "post", []],
        ["n5", "post", []],
        ["n4", "post", []],
        ["n3", "post", []],
        ["n2", "skip", ["over the per-poll cap of 5"]],
        ["n1", "skip", ["over the per-poll cap of 5"]]
      ]
    },
    {
      name: "the cap counts only what passes: filtered, old and seen items leave room",
      items: [item("f1", 9, "spam"), item("f2", 8, "spam"), item("o", 25 * 60), item("s", 7), item("p1", 6), item("p2", 5), item("p3", 4)],
      seen: ["s"],
      feed: { options: { filter_words: ["spam"], filter_excl: true, filter_mode: "AND" } },
      limits: { maxItemsPerPoll: 2 },
      expected: [
        ["o", "skip", ["older than 24 h"]],
        ["f1", "skip", ["filter_words (excluded): \"spam\" in the title"]],
        ["f2", "skip", ["filter_words (excluded): \"spam\" in the title"]],
        ["s", "skip", ["already posted"]],
        ["p1", "post", ["filter_words (excluded): no element in the title"]],
        ["p2", "post", ["filter_words (excluded): no element in the title"]],
        ["p3", "skip", ["over the per-poll cap of 2"]]
      ]
    },
    {
      name: "every rule that stands in the way is named: the age and the filter",
      items: [item("both", 26 * 60, "Weekly digest")],
      feed: { options: { filter_words: ["release"] } },
      expected: [["both", "skip", ["older than 24 h", "filter_words: no element in the title"]]]
    },
    {
      name: "a post lists the rules that let it through",
      items: [item("rel", 3, "New release 2.0")],
      feed: { options: { filter_words: ["release"], filter_mode: "OR" } },
      expected: [["rel", "post", ["filter_words: \"release\" in the title"]]]
    },
    {
      name: "an item seen before is never new: \"already posted\"",
      items: [item("a", 3), item("b", 2)],
      seen: ["a"],
      expected: [["a", "skip", ["already posted"]], ["b", "post", []]]
    },
    {
      name: "a cap of 0 posts nothing",
      items: [item("a", 3)],
      limits: { maxItemsPerPoll: 0 },
      expected: [["a", "skip", ["over the per-poll cap of 0"]]]
    }
  ]
  for (const row of TABLE) {
    it(row.name, () => {
      const ds = selectForFeed(row.items, new Set(row.seen ?? []), feed(row.feed), { ...limits, ...row.limits })
      expect(rows(ds)).toEqual(row.expected)
      for (const d of ds) expect(d.isNew).toBe(!(row.seen ?? []).includes(d.item.id))
    })
  }

  it("a post carries the rendered message; a skip none unless asked (the preview)", () => {
    const f = feed({ options: { custom_header: "%title% by %author%" }, defaults: { name: "Fallback" } })
    const items = [item("old", 30 * 60), item("new", 1)]
    const [old, fresh] = selectForFeed(items, new Set(), f, limits)
    expect(fresh!.message).toEqual(render(items[1]!, f.options, f.defaults))
    expect(fresh!.message?.content).toBe("Item new by Ann\nhttps://news.test/new")
    expect(old!.message).toBeNull()
    const [preview] = selectForFeed(items, new Set(), f, limits, { renderSkipped: true })
    expect(preview!.message).toEqual(render(items[0]!, f.options, f.defaults))
  })

  it("what an item seen before reads as, from the feed's delivery log", () => {
    const HISTORY: ReadonlyArray<readonly [PastDelivery | undefined, string]> = [
      [undefined, "already posted"],
      [{ state: "sent", reason: null }, "already posted"],
      [{ state: "pending", reason: null }, "already queued for posting"],
      [{ state: "sending", reason: null }, "already queued for posting"],
      [{ state: "skipped", reason: "older than 24 h" }, "already skipped: older than 24 h"],
      [{ state: "skipped", reason: null }, "already skipped"],
      [{ state: "failed", reason: "the chat platform answered 500" }, "already tried: the chat platform answered 500"],
      [{ state: "failed", reason: null }, "already tried, and it failed"]
    ]
    for (const [past, reason] of HISTORY) {
      const history = new Map(past === undefined ? [] : [["a", past]])
      expect(selectForFeed([item("a", 1)], new Set(["a"]), feed(), limits, { history })[0]!.reasons).toEqual([reason])
    }
  })
})

describe("planPoll: a source's poll", () => {
  const items = [item("b", 2), item("a", 3), item("c", 1)]

  it("the first poll stores every id served, oldest first, and posts nothing", () => {
    expect(planPoll({ items, seen: new Set(), baselined: false, feeds: [feed()], limits })).toEqual({
      _tag: "Baseline",
      seenIds: ["a", "b", "c"]
    })
  })

  it("a first poll with nothing served is a baseline too (what comes next is new)", () => {
    expect(planPoll({ items: [], seen: new Set(), baselined: false, feeds: [feed()], limits })).toEqual({ _tag: "Baseline", seenIds: [] })
  })

  it("later polls: only the ids not seen before, decided per feed", () => {
    const plan = planPoll({
      items,
      seen: new Set(["a"]),
      baselined: true,
      feeds: [feed({ id: "1" }), feed({ id: "2", createdAt: minutesAgo(1.5) }), feed({ id: "3", options: { filter_words: ["zzz"] } })],
      limits
    })
    expect(plan._tag).toBe("Deliver")
    if (plan._tag !== "Deliver") return
    expect(plan.seenIds).toEqual(["b", "c"])
    expect(plan.feeds.map((f) => [f.feedId, rows(f.decisions)])).toEqual([
      ["1", [["b", "post", []], ["c", "post", []]]],
      ["2", [["b", "skip", ["from before the feed was created"]], ["c", "post", []]]],
      ["3", [["b", "skip", ["filter_words: no element in the title"]], ["c", "skip", ["filter_words: no element in the title"]]]]
    ])
    for (const f of plan.feeds) for (const d of f.decisions) expect(d.isNew).toBe(true)
  })

  it("nothing new: no decisions", () => {
    const plan = planPoll({ items, seen: new Set(["a", "b", "c"]), baselined: true, feeds: [feed()], limits })
    expect(plan).toEqual({ _tag: "Deliver", seenIds: [], feeds: [{ feedId: "1", decisions: [] }] })
  })
})

describe("oldestFirst", () => {
  it("sorts by eventAt (not publishedAt) and keeps the first of an id", () => {
    const updated = rss({ id: "u", publishedAt: minutesAgo(100), eventAt: minutesAgo(1) })
    const fresh = rss({ id: "f", publishedAt: minutesAgo(5), eventAt: minutesAgo(5) })
    expect(oldestFirst([updated, fresh, rss({ id: "u", eventAt: minutesAgo(50), publishedAt: minutesAgo(50) })]).map((i) => i.id)).toEqual(["f", "u"])
  })

  it("items of the same second go by the source's order, newest listed first: the one listed later is the older", () => {
    const second = minutesAgo(3)
    const [a, b, c] = ["a", "b", "c"].map((id) => rss({ id, eventAt: second, publishedAt: second }))
    const older = rss({ id: "o", eventAt: minutesAgo(10), publishedAt: minutesAgo(10) })
    // As a feed serves them: c (the newest), b, a, then the older item.
    expect(oldestFirst([c!, b!, a!, older]).map((i) => i.id)).toEqual(["o", "a", "b", "c"])
    expect(oldestFirst([c!, b!, a!, older]).at(-1)?.id, "the newest is the one listed first").toBe("c")
  })
})
