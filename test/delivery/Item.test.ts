/**
 * The item's helpers that decide what a user sees: a video's duration (`%duration%`, read from the
 * platform's ISO 8601 text) and what Text.test.ts's table leaves out: weeks, several digits, white
 * space around it, and text before or after a duration that must not be taken for one.
 */
import { describe, expect, it } from "vitest"
import { isoDurationSeconds, itemEvent, itemTitle } from "../../src/services/delivery/render/Item.ts"
import { forum, microblog, photo, rss, streaming, video } from "./ItemFixtures.ts"

describe("isoDurationSeconds: what the platform's duration text reads as", () => {
  it.each([
    ["P2W", 2 * 7 * 86_400],
    ["P10W", 10 * 7 * 86_400],
    ["PT1.25S", 1],
    ["P1W1DT1H1M1S", 604_800 + 86_400 + 3_600 + 60 + 1],
    ["PT10H11M12S", 10 * 3_600 + 11 * 60 + 12],
    ["P10D", 864_000],
    ["PT59.9S", 59],
    ["  PT1M  ", 60],
    ["P1DT", null],
    ["  P  ", null],
    ["  PT  ", null],
    ["xP1D", null],
    ["P1Dx", null],
    ["PXD", null],
    ["PT1M30", null]
  ] as const)("isoDurationSeconds(%j) = %j", (iso, seconds) => {
    expect(isoDurationSeconds(iso)).toBe(seconds)
  })
})

describe("what a list shows of an item, and the event filter_event reads", () => {
  it("each module's own title field; null when the item has none", () => {
    expect([
      itemTitle(rss({ title: null })),
      itemTitle(forum({ title: "F" })),
      itemTitle(video({ title: "V" })),
      itemTitle(streaming({ status: null })),
      itemTitle(microblog({ text: "M" })),
      itemTitle(photo({ caption: null }))
    ]).toEqual([null, "F", "V", null, "M", null])
  })

  it("modules without event types have no event (null), the others their own", () => {
    expect([rss(), forum(), microblog()].map(itemEvent)).toEqual([null, null, null])
    expect([streaming({ event: "offline" }), video({ event: "updated" }), photo()].map(itemEvent)).toEqual(["offline", "updated", "post"])
  })
})
