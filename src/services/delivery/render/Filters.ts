/**
 * Whether a feed posts an item, by its `webhook_options` (delivery.md §2), and why. Each option the
 * module has and that is set is one rule; every rule is checked (none short-circuits), so the
 * preview can name all that stand in the way. `reasons`: for a skip, every rule that failed; for a
 * post, every rule that was checked, each saying why it let the item through ([] when none is set).
 * Rules in this order: filter_event, filter_flair, filter_game, filter_words, nsfw.
 *
 * Word filter: an element matches when it occurs in the text, ignoring case, with runs of white
 * space counted as one space (an element may hold several words). The text: rss, forum, video the
 * title; microblog the post text; photo the caption (a missing text contains nothing).
 */
import type { Item } from "./Item.ts"
import { itemEvent } from "./Item.ts"
import { isNsfw } from "./Nsfw.ts"
import type { DeliveryOptions } from "./Options.ts"
import { activeList, appliesTo } from "./Options.ts"

export type Verdict = "post" | "skip"

export interface Decision {
  readonly verdict: Verdict
  readonly reasons: ReadonlyArray<string>
}

interface Check {
  readonly pass: boolean
  readonly reason: string
}

// Final sigma (ς) is σ ignoring case: "ΟΔΟΣ" lower-cases to "οδος", yet it occurs in "ΟΔΟΣΗΜΑΝΣΗ" ("οδοσημανση").
const normalise = (s: string) => s.normalize("NFC").toLowerCase().replace(/\u03C2/g, "\u03C3").replace(/\s+/g, " ")
const quoted = (elements: ReadonlyArray<string>) => elements.map((e) => JSON.stringify(e)).join(", ")

/** The text the word filter reads, and what the reasons call it; null for streaming. */
export const wordFilterText = (item: Item): { readonly text: string; readonly label: string } | null => {
  switch (item.module) {
    case "rss":
    case "forum":
    case "video":
      return { text: item.title ?? "", label: "the title" }
    case "microblog":
      return { text: item.text, label: "the text" }
    case "photo":
      return { text: item.caption ?? "", label: "the caption" }
    case "streaming":
      return null
  }
}

/**
 * The word filter on `text` (delivery.md §2 truth table): excl false + OR: one element occurs;
 * false + AND: every element occurs; true + AND: no element occurs; true + OR: one does not occur.
 */
export const wordFilter = (
  text: string,
  words: ReadonlyArray<string>,
  mode: "AND" | "OR",
  excl: boolean,
  label = "the text"
): Check => {
  const haystack = normalise(text)
  const found = words.filter((w) => haystack.includes(normalise(w)))
  const missing = words.filter((w) => !found.includes(w))
  const tag = excl ? "filter_words (excluded)" : "filter_words"
  if (!excl && mode === "OR") {
    return found.length > 0
      ? { pass: true, reason: `${tag}: ${quoted(found)} in ${label}` }
      : { pass: false, reason: `${tag}: no element in ${label}` }
  }
  if (!excl && mode === "AND") {
    return missing.length === 0
      ? { pass: true, reason: `${tag}: every element in ${label}` }
      : { pass: false, reason: `${tag}: ${quoted(missing)} not in ${label}` }
  }
  if (mode === "AND") {
    return found.length === 0
      ? { pass: true, reason: `${tag}: no element in ${label}` }
      : { pass: false, reason: `${tag}: ${quoted(found)} in ${label}` }
  }
  return missing.length > 0
    ? { pass: true, reason: `${tag}: ${quoted(missing)} not in ${label}` }
    : { pass: false, reason: `${tag}: every element in ${label}` }
}

const eventRule = (item: Item, o: DeliveryOptions): Check | null => {
  const listed = appliesTo(item.module, "filter_event") ? activeList(o.filter_event) : null
  const event = itemEvent(item)
  if (listed === null || event === null) return null
  return listed.includes(event)
    ? { pass: true, reason: `filter_event: ${event} is listed` }
    : { pass: false, reason: `filter_event: ${event} is not listed` }
}

const flairRule = (item: Item, o: DeliveryOptions): Check | null => {
  const listed = activeList(o.filter_flair)
  if (item.module !== "forum" || listed === null) return null
  const flair = item.flair?.trim() ?? ""
  if (flair === "") return { pass: false, reason: "filter_flair: the post has no flair" }
  const key = flair.toLowerCase()
  return listed.some((f) => f.trim().toLowerCase() === key)
    ? { pass: true, reason: `filter_flair: flair ${flair} is listed` }
    : { pass: false, reason: `filter_flair: flair ${flair} is not listed` }
}

const gameRule = (item: Item, o: DeliveryOptions): Check | null => {
  const listed = activeList(o.filter_game)
  if (item.module !== "streaming" || listed === null) return null
  const game = item.gameId?.trim() ?? ""
  if (game === "") return { pass: false, reason: "filter_game: the stream started with no game" }
  return listed.some((g) => g.trim() === game)
    ? { pass: true, reason: `filter_game: the stream started with game ${game}, listed` }
    : { pass: false, reason: `filter_game: the stream started with game ${game}, not listed` }
}

const wordsRule = (item: Item, o: DeliveryOptions): Check | null => {
  const words = appliesTo(item.module, "filter_words") ? activeList(o.filter_words) : null
  const target = wordFilterText(item)
  if (words === null || target === null) return null
  return wordFilter(target.text, words, o.filter_mode ?? "OR", o.filter_excl ?? false, target.label)
}

const nsfwRule = (item: Item, o: DeliveryOptions): Check | null => {
  const mode = appliesTo(item.module, "nsfw") ? o.nsfw : null
  // Stryker disable next-line LogicalOperator: a null or absent mode matches no case below, which also gives no check
  if (mode === null || mode === undefined) return null
  const nsfw = isNsfw(item)
  const what = nsfw ? "the item is NSFW" : "the item is not NSFW"
  switch (mode) {
    case "skip":
      return { pass: !nsfw, reason: `nsfw: skip — ${what}` }
    case "only":
      return { pass: nsfw, reason: `nsfw: only — ${what}` }
    case "censor":
      return { pass: true, reason: nsfw ? `nsfw: censor — ${what}, its URLs are wrapped` : `nsfw: censor — ${what}` }
  }
}

const RULES = [eventRule, flairRule, gameRule, wordsRule, nsfwRule]

/** Post or skip the item, with every rule that decided (see the module comment). */
export const decide = (item: Item, options: DeliveryOptions): Decision => {
  const checks = RULES.flatMap((rule) => rule(item, options) ?? [])
  const failed = checks.filter((c) => !c.pass)
  return failed.length > 0
    ? { verdict: "skip", reasons: failed.map((c) => c.reason) }
    : { verdict: "post", reasons: checks.map((c) => c.reason) }
}
