/**
 * Filter cases (delivery.md §2) issue #19's mutation run found unpinned: what "case-insensitive
 * substring" and "an element may hold several words" mean at their edges (a Greek final sigma, words
 * run together), that a missing text contains nothing at all, that a flair or a game id made of
 * white space is none and that white space around a listed one does not count, and the helpers the
 * preview calls on their own.
 */
import { describe, expect, it } from "vitest"
import type { Decision } from "../../src/services/delivery/render/Filters.ts"
import { decide, wordFilter, wordFilterText } from "../../src/services/delivery/render/Filters.ts"
import { forum, photo, rss, streaming } from "./ItemFixtures.ts"

const post = (...reasons: Array<string>): Decision => ({ verdict: "post", reasons })
const skip = (...reasons: Array<string>): Decision => ({ verdict: "skip", reasons })

describe("word filter: case-insensitive substring", () => {
  it.each([
    // "announce" matches "announcement": a word ending in Σ occurs in a longer word, in any case.
    ["a Greek word ending in sigma inside a longer word, same case", "ΟΔΟΣΗΜΑΝΣΗ ΣΤΗΝ ΑΘΗΝΑ", "ΟΔΟΣ", "post"],
    ["the same, other case", "Οδοσήμανση στην Αθήνα", "ΟΔΟΣ", "post"],
    ["the same word at the end of the title", "ΚΛΕΙΣΤΗ ΟΔΟΣ", "οδος", "post"],
    ["another word does not match for want of its sigma", "ΟΔΟΙ ΚΛΕΙΣΤΕΣ", "ΟΔΟΣ", "skip"],
    ["two words run together are not the element of two words", "twothree", "two three", "skip"],
    ["a tab and newlines between the words count as one space", "one two\t\n three", "two three", "post"]
  ] as const)("%s", (_, title, word, verdict) => {
    expect(decide(rss({ title }), { filter_words: [word] }).verdict).toBe(verdict)
  })
})

describe("a missing text contains nothing", () => {
  const vowels = ["a", "e", "i", "o", "u", "r", "s", " "]
  it("rss without a title: not even one letter occurs (OR skips, excluded AND posts)", () => {
    expect(decide(rss({ title: null }), { filter_words: vowels })).toEqual(skip("filter_words: no element in the title"))
    expect(decide(rss({ title: null }), { filter_words: vowels, filter_excl: true, filter_mode: "AND" }))
      .toEqual(post("filter_words (excluded): no element in the title"))
  })

  it("photo without a caption: likewise", () => {
    expect(decide(photo({ caption: null }), { filter_words: vowels })).toEqual(skip("filter_words: no element in the caption"))
  })

  it("wordFilterText: the empty text for a missing title or caption, none at all for streaming", () => {
    expect(wordFilterText(rss({ title: null }))).toEqual({ text: "", label: "the title" })
    expect(wordFilterText(photo({ caption: null }))).toEqual({ text: "", label: "the caption" })
    expect(wordFilterText(streaming())).toBeNull()
  })
})

describe("wordFilter on its own (the preview's call)", () => {
  it("without a label its reasons speak of the text", () => {
    expect(wordFilter("abc", ["b"], "OR", false)).toEqual({ pass: true, reason: "filter_words: \"b\" in the text" })
    expect(wordFilter("abc", ["x"], "OR", false)).toEqual({ pass: false, reason: "filter_words: no element in the text" })
  })
})

describe("filter_flair and filter_game: white space is no value", () => {
  it("a flair of white space only is no flair", () => {
    expect(decide(forum({ flair: "  " }), { filter_flair: ["Meme"] })).toEqual(skip("filter_flair: the post has no flair"))
  })

  it("white space around the post's flair or a listed one does not count", () => {
    expect(decide(forum({ flair: " Meme " }), { filter_flair: ["meme"] })).toEqual(post("filter_flair: flair Meme is listed"))
    expect(decide(forum({ flair: "Meme" }), { filter_flair: [" News", " meme "] })).toEqual(post("filter_flair: flair Meme is listed"))
  })

  it("a game id of white space only is no game", () => {
    expect(decide(streaming({ gameId: " " }), { filter_game: ["743"] })).toEqual(skip("filter_game: the stream started with no game"))
  })

  it("white space around the stream's game id or a listed one does not count", () => {
    expect(decide(streaming({ gameId: " 743\n" }), { filter_game: ["743"] }))
      .toEqual(post("filter_game: the stream started with game 743, listed"))
    expect(decide(streaming({ gameId: "743" }), { filter_game: ["1", " 743 "] }))
      .toEqual(post("filter_game: the stream started with game 743, listed"))
  })
})
