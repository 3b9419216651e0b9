/**
 * The age cut-off of delivery.md §1 at its exact edge, which issue #19's mutation run found
 * unpinned: items *older than* FEED_MAX_ITEM_AGE_HOURS are never posted, so an item exactly that old
 * is posted, and one a millisecond older is not.
 */
import { describe, expect, it } from "vitest"
import type { SelectFeed, SelectLimits } from "../../src/services/delivery/render/Select.ts"
import { planPoll, selectForFeed } from "../../src/services/delivery/render/Select.ts"
import { rss } from "./ItemFixtures.ts"

const NOW = new Date("2024-05-02T12:00:00.000Z")
const HOUR = 3_600_000
const limits: SelectLimits = { now: NOW, maxItemAgeHours: 24, maxItemsPerPoll: 5 }
const feed: SelectFeed = { id: "1", createdAt: new Date(NOW.getTime() - 7 * 24 * HOUR), options: {} }
const aged = (id: string, ms: number) => {
  const at = new Date(NOW.getTime() - ms)
  return rss({ id, url: `https://news.test/${id}`, publishedAt: at, eventAt: at })
}

describe("the age cut-off at its edge", () => {
  it("exactly 24 h old is posted; 1 ms more is older than 24 h", () => {
    const decisions = selectForFeed([aged("older", 24 * HOUR + 1), aged("exactly", 24 * HOUR)], new Set(), feed, limits)
    expect(decisions.map((d) => [d.item.id, d.verdict, d.reasons])).toEqual([
      ["older", "skip", ["older than 24 h"]],
      ["exactly", "post", []]
    ])
  })

  it("with another setting too, and through a poll", () => {
    const plan = planPoll({
      items: [aged("exactly", 2 * HOUR), aged("older", 2 * HOUR + 1)],
      seen: new Set(),
      baselined: true,
      feeds: [feed],
      limits: { ...limits, maxItemAgeHours: 2 }
    })
    expect(plan._tag === "Deliver" ? plan.feeds[0]!.decisions.map((d) => [d.item.id, d.verdict, d.reasons]) : plan).toEqual([
      ["older", "skip", ["older than 2 h"]],
      ["exactly", "post", []]
    ])
  })
})
