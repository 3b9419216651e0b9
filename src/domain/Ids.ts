import { Schema } from "effect"

/** A chat-platform id: a decimal string of up to 20 digits. */
export const Snowflake = Schema.String.check(Schema.isPattern(/^[0-9]{1,20}$/, { message: "expected a numeric id" }))

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

/** Positive integers assigned by the gateway (`workflow_id`, feed ids). */
export const FormId = Schema.Int.check(Schema.isGreaterThan(0)).pipe(Schema.brand("FormId"))
export type FormId = typeof FormId.Type
/** Path form of a form id: a decimal string decoded to the integer. */
export const FormIdParam = Schema.NumberFromString.pipe(Schema.decodeTo(FormId))

/** A feed id is the decimal string of a positive integer. */
export const FeedId = Schema.String.check(Schema.isPattern(/^[1-9][0-9]{0,17}$/, { message: "expected a feed id" })).pipe(
  Schema.brand("FeedId")
)
export type FeedId = typeof FeedId.Type
