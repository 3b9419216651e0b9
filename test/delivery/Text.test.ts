/**
 * The building blocks: code-point lengths and cuts, HTML to text, URL wrapping, ISO durations, and
 * the item's JSON codec (what a job payload carries).
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { censorUrls, urlSpans } from "../../src/services/delivery/render/Censor.ts"
import { decodeEntities, stripHtml } from "../../src/services/delivery/render/Html.ts"
import { isoDurationSeconds, Item, itemEvent, ItemJson, itemTitle } from "../../src/services/delivery/render/Item.ts"
import { isNsfw, NSFW_TEXT_MAX } from "../../src/services/delivery/render/Nsfw.ts"
import { codePointLength, takeCodePoints, truncate } from "../../src/services/delivery/render/Text.ts"
import { forum, microblog, photo, rss, streaming, video } from "./ItemFixtures.ts"

describe("code points", () => {
  it.each([
    ["", 0], ["abc", 3], ["😀", 1], ["👍🏽", 2], ["🇫🇷", 2], ["é", 1], ["e\u0301", 2], ["\ud800", 1]
  ] as const)("length of %j is %i", (s, n) => {
    expect(codePointLength(s)).toBe(n)
  })

  it.each([
    ["abcdef", 6, "abcdef"],
    ["abcdef", 5, "abcd…"],
    ["abcdef", 1, "…"],
    ["abcdef", 0, ""],
    ["😀😀😀", 2, "😀…"],
    ["ab👨‍👩‍👧cd", 5, "ab…"],
    ["e\u0301e\u0301e\u0301", 4, "e\u0301…"],
    ["ab   cd", 5, "ab…"],
    ["see https://a.test/long", 12, "see…"],
    ["https://a.test/long", 10, "https://a…"]
  ] as const)("truncate(%j, %i) = %j", (s, max, expected) => {
    expect(truncate(s, max, urlSpans(s))).toBe(expected)
  })

  it("takeCodePoints never splits a surrogate pair", () => {
    expect(takeCodePoints("😀😀", 1)).toBe("😀")
    expect(takeCodePoints("a", 5)).toBe("a")
  })
})

describe("HTML to text", () => {
  it.each([
    ["&amp;&lt;&gt;&quot;&#39;&#x27;&hellip;&unknown;", "&<>\"''…&unknown;"],
    ["&#0;&#xD800;&#1114112;", "\ufffd\ufffd\ufffd"],
    ["&amp;lt;", "&lt;"]
  ] as const)("decodeEntities(%j)", (html, text) => {
    expect(decodeEntities(html)).toBe(text)
  })

  it.each([
    ["<p>a</p><p>b</p>", "a\n\nb"],
    ["<div>a<br/>b<br>c</div>", "a\nb\nc"],
    ["<table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table>", "1 2\n3"],
    ["<!-- hidden --><style>p{}</style>shown", "shown"],
    ["a < b and c > d", "a < b and c > d"],
    ["<p>  spaced \t out  </p>", "spaced out"],
    ["<scr<script>ipt>x</script>", "<scr"]
  ] as const)("stripHtml(%j)", (html, text) => {
    expect(stripHtml(html)).toBe(text)
  })

  it("hostile HTML (unclosed tags, comments) is read in one pass", () => {
    expect(stripHtml("<a".repeat(100_000)).length).toBe(200_000)
    expect(stripHtml("x<!--" + "y".repeat(100_000))).toBe("x")
  })
})

describe("URLs", () => {
  it.each([
    ["see https://a.test/x.", "see <https://a.test/x>."],
    ["**https://a.test/x**", "**<https://a.test/x>**"],
    ["[t](https://a.test/x)", "[t](<https://a.test/x>)"],
    ["<https://a.test/x>", "<https://a.test/x>"],
    ["HTTP://A.TEST and http://b.test", "<HTTP://A.TEST> and <http://b.test>"],
    ["ftp://a.test https:// mailto:x@y.test", "ftp://a.test https:// mailto:x@y.test"]
  ] as const)("censorUrls(%j)", (text, expected) => {
    expect(censorUrls(text)).toBe(expected)
  })
})

describe("items", () => {
  it.each([
    ["PT1H2M3S", 3723], ["PT4M5S", 245], ["P1DT1S", 86401], ["PT0S", 0], ["P0D", 0], ["PT1.5S", 1],
    ["P1Y", null], ["PT", null], ["P", null], ["1:00", null]
  ] as const)("isoDurationSeconds(%j) = %j", (iso, seconds) => {
    expect(isoDurationSeconds(iso)).toBe(seconds)
  })

  it("every module survives the JSON codec (dates as ISO strings)", () => {
    for (const item of [rss(), forum(), streaming(), microblog(), video(), photo()]) {
      const json = JSON.parse(JSON.stringify(Schema.encodeSync(ItemJson)(item)))
      expect(json.publishedAt).toBe("2024-05-01T12:34:56.789Z")
      expect(Schema.decodeUnknownSync(ItemJson)(json)).toEqual(item)
    }
  })

  it("the schema refuses an item without its module's fields", () => {
    expect(() => Schema.decodeUnknownSync(Item)({ ...rss(), module: "forum" })).toThrow()
    expect(() => Schema.decodeUnknownSync(Item)({ ...video(), durationSeconds: -1 })).toThrow()
  })

  it("title and event of each module", () => {
    expect([rss(), forum(), streaming(), microblog(), video(), photo()].map((i) => [itemTitle(i), itemEvent(i)])).toEqual([
      ["Hello world", null], ["Hello world", null], ["Blitz night", "live"], ["Hello world", null],
      ["Hello world", "added"], ["Hello world", "post"]
    ])
  })

  it("the word list reads the start of a long text", () => {
    const padding = "calm words ".repeat(NSFW_TEXT_MAX / 10)
    expect(isNsfw(rss({ contentHtml: "fuck " + padding }))).toBe(true)
    expect(isNsfw(rss({ contentHtml: padding + " fuck" }))).toBe(false)
    expect(isNsfw(rss({ title: "fuck", contentHtml: padding }))).toBe(true)
  })
})
