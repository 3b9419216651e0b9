import { Schema, SchemaTransformation } from "effect"

/** The shape of a chat-platform id in a body: a decimal string of up to 20 digits. */
export const SNOWFLAKE = /^[0-9]{1,20}$/

/** A chat-platform id: a decimal string of up to 20 digits. */
export const Snowflake = Schema.String.check(Schema.isPattern(SNOWFLAKE, { message: "expected a numeric id" }))

export const UserId = Snowflake.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const BotId = Snowflake.pipe(Schema.brand("BotId"))
export type BotId = typeof BotId.Type
export const ServerId = Snowflake.pipe(Schema.brand("ServerId"))
export type ServerId = typeof ServerId.Type
export const ChannelId = Snowflake.pipe(Schema.brand("ChannelId"))
export type ChannelId = typeof ChannelId.Type
export const RoleId = Snowflake.pipe(Schema.brand("RoleId"))
export type RoleId = typeof RoleId.Type

/**
 * Path ids are canonical positive decimals (decisions.md "Errors"): no sign, no leading zero, no
 * other notation (`01`, `+1`, `0x2`, `1e0`, ` 2` are refused, 400 naming the parameter). Any length:
 * a canonical id that names nothing is a 404, answered by the route, not here.
 */
export const CANONICAL_ID = /^[1-9][0-9]*$/

const canonical = (what: string) => {
  const message = `expected ${what}: a positive decimal integer, without sign, leading zero or other notation`
  return Schema.String.annotate({ message }).check(Schema.isPattern(CANONICAL_ID, { message }))
}

/** `:appClientId`: a bot id as the bots list shows it. */
export const BotIdParam = canonical("a bot id").pipe(Schema.brand("BotId"))
/** `:serverId`. */
export const ServerIdParam = canonical("a server id").pipe(Schema.brand("ServerId"))

/** Positive integers assigned by the gateway (`workflow_id`, feed ids). */
export const FormId = Schema.Int.check(Schema.isGreaterThan(0)).pipe(Schema.brand("FormId"))
export type FormId = typeof FormId.Type

/**
 * `:formId`: a canonical decimal, decoded to the number. One past `Number.MAX_SAFE_INTEGER` is
 * still canonical: it decodes (imprecisely, or to Infinity) and the forms service answers 404
 * for any id that is not a safe integer (`isStorableFormId`).
 */
export const FormIdParam = canonical("a form id").pipe(
  Schema.decodeTo(
    Schema.Number.pipe(Schema.brand("FormId")),
    SchemaTransformation.transform({ decode: (s) => Number(s), encode: (n) => String(n) })
  )
)

/** Whether a decoded form id can name a stored form (workflow ids are `bigint`, read as safe integers). */
export const isStorableFormId = (id: number): boolean => Number.isSafeInteger(id) && id > 0

/** The largest feed id (`bigserial`, PostgreSQL's int8). */
const INT8_MAX = "9223372036854775807"

/**
 * `:feedId` (and a feed's `id`): the decimal string of a positive integer, canonical in a path. Any
 * length passes here: a canonical id beyond int8 names no feed, and the feeds service answers 404
 * for it without asking the database (`isStorableFeedId`), like any other id that names nothing.
 */
export const FeedId = canonical("a feed id").pipe(Schema.brand("FeedId"))
export type FeedId = typeof FeedId.Type

/** Whether a canonical feed id can name a stored feed (feed ids are int8): else it is a 404, not a query. */
export const isStorableFeedId = (id: string): boolean =>
  CANONICAL_ID.test(id) && (id.length < INT8_MAX.length || (id.length === INT8_MAX.length && id <= INT8_MAX))
