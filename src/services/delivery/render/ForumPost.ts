/**
 * A feed whose webhook is in a forum channel opens one post per item (delivery.md §10): its
 * `thread_name` is `forum_thread_name` (default `%title%`) with the placeholders replaced, on one
 * line, at most 100 characters (never empty: the item's URL stands in); its `applied_tags` are the
 * ids of the forum's tags named in `forum_tags` (case-insensitive; unknown names ignored; at most the
 * 5 a post may carry).
 */
import { truncate } from "./Text.ts"

export const MAX_THREAD_NAME = 100
export const MAX_APPLIED_TAGS = 5
export const DEFAULT_THREAD_NAME = "%title%"

export interface ForumTag {
  readonly id: string
  readonly name: string
}

/** The thread's name from the rendered template (`filled`), or `fallback` when it comes out blank. */
export const threadName = (filled: string, fallback: string): string => {
  const line = filled.replace(/\s+/g, " ").trim()
  return truncate(line === "" ? fallback : line, MAX_THREAD_NAME)
}

/** The ids of the forum's tags named in `names`, in the forum's order. */
export const appliedTags = (forumTags: ReadonlyArray<ForumTag>, names: ReadonlyArray<string> | null | undefined): ReadonlyArray<string> => {
  const wanted = new Set((names ?? []).map((n) => n.trim().toLowerCase()))
  return forumTags.filter((t) => wanted.has(t.name.trim().toLowerCase())).slice(0, MAX_APPLIED_TAGS).map((t) => t.id)
}
