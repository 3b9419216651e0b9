/**
 * The `webhook_options` the delivery rules read. Every module's decoded options (src/domain/feeds/Feed.ts)
 * fit this shape; `readOptions` takes a stored, untyped object (`Feed.webhook_options`) and keeps
 * only well-typed values, so a damaged row filters nothing rather than throwing. An option that is
 * null or absent does not filter (delivery.md §2); an option the module lacks is ignored.
 */
import { MODULE_OPTIONS } from "../../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../../domain/platform/Platform.ts"

type Opt<A> = A | null | undefined

export interface DeliveryOptions {
  readonly filter_mode?: Opt<"AND" | "OR">
  readonly nsfw?: Opt<"censor" | "skip" | "only">
  readonly filter_words?: Opt<ReadonlyArray<string>>
  readonly filter_excl?: Opt<boolean>
  readonly filter_event?: Opt<ReadonlyArray<string>>
  readonly filter_flair?: Opt<ReadonlyArray<string>>
  readonly filter_game?: Opt<ReadonlyArray<string>>
  readonly custom_header?: Opt<string>
  readonly "webhook-name"?: Opt<string>
  readonly "no-username-overwrite"?: Opt<boolean>
  readonly "no-avatar-overwrite"?: Opt<boolean>
  readonly mention_roles?: Opt<ReadonlyArray<string>>
  readonly embed?: Opt<boolean>
  readonly embed_color?: Opt<string>
  readonly thread_id?: Opt<string>
  readonly forum_thread_name?: Opt<string>
  readonly forum_tags?: Opt<ReadonlyArray<string>>
  readonly crosspost?: Opt<boolean>
  readonly split?: Opt<boolean>
}

const isStrings = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((s) => typeof s === "string")
const oneOf = <const L extends ReadonlyArray<string>>(values: L) => (v: unknown): v is L[number] =>
  typeof v === "string" && values.includes(v)
const isString = (v: unknown): v is string => typeof v === "string"
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean"

const readers: { readonly [K in keyof DeliveryOptions]-?: (v: unknown) => boolean } = {
  filter_mode: oneOf(["AND", "OR"]),
  nsfw: oneOf(["censor", "skip", "only"]),
  filter_words: isStrings,
  filter_excl: isBoolean,
  filter_event: isStrings,
  filter_flair: isStrings,
  filter_game: isStrings,
  custom_header: isString,
  "webhook-name": isString,
  "no-username-overwrite": isBoolean,
  "no-avatar-overwrite": isBoolean,
  mention_roles: isStrings,
  embed: isBoolean,
  embed_color: isString,
  thread_id: isString,
  forum_thread_name: isString,
  forum_tags: isStrings,
  crosspost: isBoolean,
  split: isBoolean
}

/** The options of a stored feed, each kept only when its value has the right type. */
export const readOptions = (raw: unknown): DeliveryOptions => {
  if (typeof raw !== "object" || raw === null) return {}
  const out: Record<string, unknown> = {}
  for (const [key, valid] of Object.entries(readers)) {
    const v = (raw as Record<string, unknown>)[key]
    if (valid(v)) out[key] = v
  }
  return out as DeliveryOptions
}

/** Whether the contract gives `module` the option `name` (the others are ignored here). */
export const appliesTo = (module: FeedModuleName, name: keyof DeliveryOptions): boolean =>
  Object.hasOwn(MODULE_OPTIONS[module], name)

/** A list option that filters: present and non-empty (an empty list is treated as absent). */
export const activeList = (list: Opt<ReadonlyArray<string>>): ReadonlyArray<string> | null =>
  list === null || list === undefined || list.length === 0 ? null : list
