/**
 * An interaction as the platform sends it (the fields the forms runtime reads), and the answers it
 * gives. Shapes from ../shared/discord/openapi.json and the platform's interactions documentation:
 * types 1 PING, 2 APPLICATION_COMMAND, 3 MESSAGE_COMPONENT, 5 MODAL_SUBMIT; answers 1 PONG,
 * 4 CHANNEL_MESSAGE_WITH_SOURCE, 7 UPDATE_MESSAGE, 9 MODAL.
 */
import { Schema } from "effect"

const Snowflake = Schema.String.check(Schema.isPattern(/^[0-9]{1,20}$/))

export const InteractionUser = Schema.Struct({
  id: Snowflake,
  username: Schema.String,
  global_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  avatar: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type InteractionUser = typeof InteractionUser.Type

export const InteractionMember = Schema.Struct({
  user: InteractionUser,
  roles: Schema.Array(Snowflake),
  /** The member's permissions in the channel, as a decimal bit set. */
  permissions: Schema.String.check(Schema.isPattern(/^[0-9]{1,30}$/)),
  nick: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type InteractionMember = typeof InteractionMember.Type

export const Interaction = Schema.Struct({
  id: Snowflake,
  application_id: Snowflake,
  type: Schema.Int,
  token: Schema.String.check(Schema.isMaxLength(1000)),
  guild_id: Schema.optionalKey(Snowflake),
  channel_id: Schema.optionalKey(Snowflake),
  member: Schema.optionalKey(InteractionMember),
  user: Schema.optionalKey(InteractionUser),
  data: Schema.optionalKey(Schema.Unknown),
  message: Schema.optionalKey(Schema.Struct({ id: Snowflake }))
})
export type Interaction = typeof Interaction.Type

export const InteractionType = { PING: 1, COMMAND: 2, COMPONENT: 3, AUTOCOMPLETE: 4, MODAL_SUBMIT: 5 } as const

export const CommandData = Schema.Struct({ name: Schema.String, type: Schema.optionalKey(Schema.Int) })

export const ComponentData = Schema.Struct({
  custom_id: Schema.String.check(Schema.isMaxLength(100)),
  component_type: Schema.Int,
  values: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMaxLength(100))).check(Schema.isMaxLength(25)))
})
export type ComponentData = typeof ComponentData.Type

/** A modal submit's data: its custom id and its top-level components as sent (read by ModalAnswers.ts). */
export const ModalData = Schema.Struct({
  custom_id: Schema.String.check(Schema.isMaxLength(100)),
  components: Schema.Array(Schema.Unknown).check(Schema.isMaxLength(5))
})
export type ModalData = typeof ModalData.Type

export const EPHEMERAL = 64

/** An answer to the platform (the body of the HTTP response). */
export type InteractionAnswer =
  | { readonly type: 1 }
  | { readonly type: 4; readonly data: MessageData }
  | { readonly type: 7; readonly data: MessageData }
  | { readonly type: 9; readonly data: ModalSpec }

export interface MessageData {
  readonly content?: string
  readonly flags?: number
  readonly embeds?: ReadonlyArray<unknown>
  readonly components?: ReadonlyArray<unknown>
  readonly allowed_mentions?: { readonly parse: ReadonlyArray<string> }
}

export interface ModalSpec {
  readonly custom_id: string
  readonly title: string
  readonly components: ReadonlyArray<unknown>
}

export const PONG: InteractionAnswer = { type: 1 }

/** An ephemeral message only the member sees, optionally with one row of buttons. */
export const ephemeral = (content: string, components?: ReadonlyArray<unknown>): InteractionAnswer => ({
  type: 4,
  data: { content, flags: EPHEMERAL, allowed_mentions: { parse: [] }, ...(components === undefined ? {} : { components }) }
})

/** A row of one button (style 1 primary, 2 secondary, 3 success, 4 danger). */
export const buttonRow = (buttons: ReadonlyArray<{ readonly label: string; readonly custom_id: string; readonly style: 1 | 2 | 3 | 4 }>) => ({
  type: 1,
  components: buttons.map((b) => ({ type: 2, style: b.style, label: b.label, custom_id: b.custom_id }))
})

/** Who clicked: the member in a server, else the user (a DM). */
export const actorOf = (i: Interaction): InteractionUser | undefined => i.member?.user ?? i.user

export const displayName = (u: InteractionUser, nick?: string | null) => nick ?? u.global_name ?? u.username
