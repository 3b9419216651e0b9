/**
 * The filter rules of delivery.md §2, table-driven: the word-filter truth table on every module
 * that has it, nsfw × module × mode, filter_event, filter_flair, filter_game (including the offline
 * event of a stream that started with a filtered game), and that every failing rule is reported.
 */
import { describe, expect, it } from "vitest"
import { withDefaults } from "../../src/domain/feeds/Feed.ts"
import type { Decision } from "../../src/services/delivery/render/Filters.ts"
import { decide, wordFilter } from "../../src/services/delivery/render/Filters.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import { readOptions } from "../../src/services/delivery/render/Options.ts"
import { AT, forum, microblog, photo, rss, streaming, TEXT_MODULES, video } from "./ItemFixtures.ts"

const post = (...reasons: Array<string>): Decision => ({ verdict: "post", reasons })
const skip = (...reasons: Array<string>): Decision => ({ verdict: "skip", reasons })

describe("word filter truth table", () => {
  const WORDS = ["foo", "bar baz"]
  // none: no element occurs; one: only "foo" (other case); all: both (other case, a run of spaces).
  const TEXTS = { none: "Nothing to see", one: "A FOO appears", all: "foo and Bar  Baz" } as const
  const TABLE: ReadonlyArray<readonly [boolean, "AND" | "OR", keyof typeof TEXTS, "post" | "skip", string]> = [
    [false, "OR", "none", "skip", "filter_words: no element in L"],
    [false, "OR", "one", "post", "filter_words: \"foo\" in L"],
    [false, "OR", "all", "post", "filter_words: \"foo\", \"bar baz\" in L"],
    [false, "AND", "none", "skip", "filter_words: \"foo\", \"bar baz\" not in L"],
    [false, "AND", "one", "skip", "filter_words: \"bar baz\" not in L"],
    [false, "AND", "all", "post", "filter_words: every element in L"],
    [true, "AND", "none", "post", "filter_words (excluded): no element in L"],
    [true, "AND", "one", "skip", "filter_words (excluded): \"foo\" in L"],
    [true, "AND", "all", "skip", "filter_words (excluded): \"foo\", \"bar baz\" in L"],
    [true, "OR", "none", "post", "filter_words (excluded): \"foo\", \"bar baz\" not in L"],
    [true, "OR", "one", "post", "filter_words (excluded): \"bar baz\" not in L"],
    [true, "OR", "all", "skip", "filter_words (excluded): every element in L"]
  ]
  for (const m of TEXT_MODULES) {
    for (const [excl, mode, text, verdict, reason] of TABLE) {
      it(`${m.module}: excl ${excl}, ${mode}, ${text} → ${verdict}`, () => {
        const options: DeliveryOptions = { filter_words: WORDS, filter_mode: mode, filter_excl: excl }
        expect(decide(m.withText(TEXTS[text]), options)).toEqual({ verdict, reasons: [reason.replace(/ L$/, ` ${m.label}`)] })
      })
    }
  }

  it.each([
    ["substring: announce matches announcement", "Big announcement today", ["announce"], post("filter_words: \"announce\" in the title")],
    ["case-insensitive both ways", "hello WORLD", ["World"], post("filter_words: \"World\" in the title")],
    ["several words in one element, in order", "one two three", ["two three"], post("filter_words: \"two three\" in the title")],
    ["several words in one element, not adjacent", "two and three", ["two three"], skip("filter_words: no element in the title")],
    ["a non-breaking space counts as a space", "two\u00a0three", ["two three"], post("filter_words: \"two three\" in the title")],
    ["no title contains nothing", null, ["x"], skip("filter_words: no element in the title")],
    ["composed and decomposed accents are equal", "Cafe\u0301 opens", ["café"], post("filter_words: \"café\" in the title")],
    ["an empty list filters nothing", "x", [], post()]
  ] as const)("%s", (_, title, words, expected) => {
    expect(decide(rss({ title }), { filter_words: words })).toEqual(expected)
  })

  it("reads the module's text: rss title, not its content; microblog text; photo caption", () => {
    const words = { filter_words: ["needle"] }
    expect(decide(rss({ title: "plain", contentHtml: "<p>needle</p>" }), words).verdict).toBe("skip")
    expect(decide(forum({ title: "plain" }), words).verdict).toBe("skip")
    expect(decide(video({ title: "plain", description: "needle" }), words).verdict).toBe("skip")
    expect(decide(microblog({ text: "a needle" }), words).verdict).toBe("post")
    expect(decide(photo({ caption: null, hashtags: ["needle"] }), words)).toEqual(skip("filter_words: no element in the caption"))
  })

  it("null or absent options do not filter; defaults are OR and not excluded", () => {
    expect(decide(rss({ title: "x" }), { filter_words: null, filter_mode: "AND", filter_excl: true })).toEqual(post())
    expect(decide(rss({ title: "a" }), { filter_words: ["a", "b"], filter_mode: null, filter_excl: null }))
      .toEqual(post("filter_words: \"a\" in the title"))
    expect(decide(rss(), {})).toEqual(post())
    for (const item of [rss(), forum(), streaming(), microblog(), video(), photo()]) {
      expect(decide(item, readOptions(withDefaults(item.module, undefined)))).toEqual(post())
    }
  })

  it("wordFilter alone (the preview can call it on any text)", () => {
    expect(wordFilter("abc", ["b"], "AND", true, "the name")).toEqual({ pass: false, reason: "filter_words (excluded): \"b\" in the name" })
  })
})

describe("nsfw × module × mode", () => {
  const CASES: ReadonlyArray<readonly [string, Item, Item]> = [
    ["forum (over_18)", forum({ over18: true }), forum({ over18: false, title: "what the fuck" })],
    ["video (age-restricted)", video({ ageRestricted: true }), video({ ageRestricted: false, title: "what the fuck" })],
    ["rss (word list, title)", rss({ title: "what the fuck" }), rss({ title: "A nice class" })],
    ["rss (word list, text)", rss({ title: "Hello", contentHtml: "<p>shit happens</p>" }), rss({ title: "Scunthorpe news" })],
    ["microblog (word list)", microblog({ text: "shit happens" }), microblog({ text: "an assassin's creed review" })],
    ["photo (word list)", photo({ caption: "fuuuuck this" }), photo({ caption: "sunset" })]
  ]
  const MODES: ReadonlyArray<readonly [DeliveryOptions["nsfw"], Decision, Decision]> = [
    [null, post(), post()],
    [undefined, post(), post()],
    ["skip", skip("nsfw: skip — the item is NSFW"), post("nsfw: skip — the item is not NSFW")],
    ["only", post("nsfw: only — the item is NSFW"), skip("nsfw: only — the item is not NSFW")],
    ["censor", post("nsfw: censor — the item is NSFW, its URLs are wrapped"), post("nsfw: censor — the item is not NSFW")]
  ]
  for (const [name, nsfw, clean] of CASES) {
    for (const [mode, onNsfw, onClean] of MODES) {
      it(`${name}, ${String(mode)}: NSFW → ${onNsfw.verdict}, clean → ${onClean.verdict}`, () => {
        expect(decide(nsfw, { nsfw: mode })).toEqual(onNsfw)
        expect(decide(clean, { nsfw: mode })).toEqual(onClean)
      })
    }
  }
})

describe("filter_event", () => {
  it.each([
    ["streaming live, [live]", streaming({ event: "live" }), ["live"], post("filter_event: live is listed")],
    ["streaming offline, [live]", streaming({ event: "offline" }), ["live"], skip("filter_event: offline is not listed")],
    ["streaming offline, [live, offline]", streaming({ event: "offline" }), ["live", "offline"], post("filter_event: offline is listed")],
    ["streaming live, [offline]", streaming({ event: "live" }), ["offline"], skip("filter_event: live is not listed")],
    ["video added, [added]", video({ event: "added" }), ["added"], post("filter_event: added is listed")],
    ["video updated, [added]", video({ event: "updated" }), ["added"], skip("filter_event: updated is not listed")],
    ["video updated, [added, updated]", video({ event: "updated" }), ["added", "updated"], post("filter_event: updated is listed")],
    ["photo post, [post]", photo(), ["post"], post("filter_event: post is listed")],
    ["video, null", video({ event: "updated" }), null, post()],
    ["rss (no such option): ignored", rss(), ["live"], post()]
  ] as const)("%s", (_, item, filter_event, expected) => {
    expect(decide(item, { filter_event })).toEqual(expected)
  })
})

describe("filter_flair", () => {
  it.each([
    ["equal, other case", "Meme", ["meme"], post("filter_flair: flair Meme is listed")],
    ["one of several", "Meme", ["News", "MEME"], post("filter_flair: flair Meme is listed")],
    ["not listed", "Meme", ["News"], skip("filter_flair: flair Meme is not listed")],
    ["equality, not substring", "Meme Review", ["Meme"], skip("filter_flair: flair Meme Review is not listed")],
    ["no flair", null, ["Meme"], skip("filter_flair: the post has no flair")],
    ["null option", null, null, post()]
  ] as const)("%s", (_, flair, filter_flair, expected) => {
    expect(decide(forum({ flair }), { filter_flair })).toEqual(expected)
  })
})

describe("filter_game (the game the stream started with)", () => {
  const later = new Date(AT.getTime() + 3 * 3600_000)
  it.each([
    ["live, listed", streaming({ gameId: "743" }), ["743"], post("filter_game: the stream started with game 743, listed")],
    ["live, one of several", streaming({ gameId: "743" }), ["1", "743"], post("filter_game: the stream started with game 743, listed")],
    ["live, not listed", streaming({ gameId: "743" }), ["123"], skip("filter_game: the stream started with game 743, not listed")],
    [
      "offline of a stream started with a filtered-out game",
      streaming({ event: "offline", gameId: "743", game: "Chess", eventAt: later }),
      ["123"],
      skip("filter_game: the stream started with game 743, not listed")
    ],
    [
      "offline of a stream started with a listed game",
      streaming({ event: "offline", gameId: "743", eventAt: later }),
      ["743"],
      post("filter_game: the stream started with game 743, listed")
    ],
    ["no game", streaming({ gameId: null, game: null }), ["743"], skip("filter_game: the stream started with no game")],
    ["null option", streaming({ gameId: "743" }), null, post()]
  ] as const)("%s", (_, item, filter_game, expected) => {
    expect(decide(item, { filter_game })).toEqual(expected)
  })
})

describe("every rule is checked", () => {
  it("a skip names every rule that failed, in order", () => {
    const item = forum({ flair: "Meme", title: "Nothing", over18: true })
    const options = { filter_flair: ["News"], filter_words: ["rust"], nsfw: "skip" } as const
    expect(decide(item, options)).toEqual(
      skip("filter_flair: flair Meme is not listed", "filter_words: no element in the title", "nsfw: skip — the item is NSFW")
    )
  })

  it("a skip leaves out the rules that passed", () => {
    expect(decide(streaming({ event: "offline", gameId: "743" }), { filter_event: ["live"], filter_game: ["743"] }))
      .toEqual(skip("filter_event: offline is not listed"))
  })

  it("a post names every rule that let it through", () => {
    const item = video({ event: "added", title: "Rust news", ageRestricted: true })
    expect(decide(item, { filter_event: ["added"], filter_words: ["rust"], nsfw: "censor" })).toEqual(post(
      "filter_event: added is listed",
      "filter_words: \"rust\" in the title",
      "nsfw: censor — the item is NSFW, its URLs are wrapped"
    ))
  })

  it("options a module lacks are ignored", () => {
    expect(decide(streaming(), { filter_words: ["zzz"], nsfw: "only", filter_flair: ["x"] })).toEqual(post())
    expect(decide(rss(), { filter_game: ["1"], filter_event: ["live"] })).toEqual(post())
  })
})

describe("readOptions (a stored options object)", () => {
  it("keeps well-typed values and drops the others", () => {
    expect(readOptions({
      filter_mode: "XOR",
      nsfw: "skip",
      filter_words: ["a", 1],
      filter_excl: "yes",
      filter_flair: ["Meme"],
      custom_header: 42,
      "webhook-name": "Bot",
      "no-avatar-overwrite": true,
      unknown: 1
    })).toEqual({ nsfw: "skip", filter_flair: ["Meme"], "webhook-name": "Bot", "no-avatar-overwrite": true })
    expect(readOptions(null)).toEqual({})
    expect(readOptions("x")).toEqual({})
  })
})
