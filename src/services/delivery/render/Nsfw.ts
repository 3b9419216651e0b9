/**
 * Whether an item is NSFW (delivery.md §2): forum by the post's `over_18` flag, video by its age
 * restriction, rss, microblog and photo by a maintained word list (obscenity's English dataset with
 * its recommended transformers: leetspeak, repeated and confusable characters) over title and text.
 */
import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from "obscenity"
import { stripHtml } from "./Html.ts"
import type { Item } from "./Item.ts"
import { takeCodePoints } from "./Text.ts"

let matcher: RegExpMatcher | undefined
const words = (): RegExpMatcher =>
  (matcher ??= new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers }))

/**
 * The word list costs ~10 µs a character: it reads the first 10,000 code points of a text (five
 * times what a message can show), so a 2 MiB feed entry cannot stall a worker.
 */
export const NSFW_TEXT_MAX = 10_000

/** Whether the word list finds an obscene word in (the start of) `text`. */
export const isProfane = (text: string): boolean => text !== "" && words().hasMatch(takeCodePoints(text, NSFW_TEXT_MAX))

/** The text the word list reads for a word-list module; null for modules with a platform flag. */
export const nsfwText = (item: Item): string | null => {
  switch (item.module) {
    case "rss":
      // The title first, so that the cap never hides it.
      return [item.title ?? "", item.contentHtml === null ? "" : stripHtml(item.contentHtml)].join("\n")
    case "microblog":
      return item.text
    case "photo":
      return [item.caption ?? "", ...item.hashtags].join("\n")
    case "forum":
    case "video":
    case "streaming":
      return null
  }
}

export const isNsfw = (item: Item): boolean => {
  switch (item.module) {
    case "forum":
      return item.over18
    case "video":
      return item.ageRestricted
    case "streaming":
      return false
    case "rss":
    case "microblog":
    case "photo":
      return isProfane(nsfwText(item) ?? "")
  }
}
