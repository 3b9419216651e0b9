/**
 * What the sandbox platform remembers for bots that take interactions: the messages bots post
 * (channel and direct messages, interaction responses and follow-ups, with every version), the
 * applications' commands, the interactions sent (by token), each member's open modal, the DM
 * channels opened, the users whose DMs are closed and the files attached. Kept beside one sandbox's `DiscordStore`, so
 * two sandboxes never share it.
 */
import type { DiscordStore } from "../DiscordState.ts"

export type Body = Readonly<Record<string, unknown>>

export interface MessageVersion {
  /** The body as the bot sent it (JSON; a multipart upload's `payload_json`), `attachments` its files' names. */
  readonly body: Body
  readonly at: number
}

export interface BotMessage {
  readonly id: string
  readonly botId: string
  readonly channelId: string
  readonly guildId: string | undefined
  /** A direct message: the recipient. */
  readonly dmUserId: string | undefined
  /** Sent through an interaction: its id, and the member who alone sees it when ephemeral. */
  readonly interactionId: string | undefined
  readonly ephemeralFor: string | undefined
  /** 0 DEFAULT, 20 CHAT_INPUT_COMMAND (an answer to a slash command). */
  readonly type: 0 | 20
  /** Oldest first; the last is the message as it is now. */
  readonly versions: Array<MessageVersion>
  deleted: boolean
}

export interface WebhookEvent {
  readonly kind: "followup" | "edit_original" | "delete_original" | "edit_followup" | "delete_followup"
  readonly message_id: string | undefined
  readonly body: Body | undefined
}

export interface InteractionRecord {
  readonly id: string
  readonly token: string
  readonly botId: string
  readonly userId: string
  readonly guildId: string
  readonly channelId: string
  /** 1 PING, 2 APPLICATION_COMMAND, 3 MESSAGE_COMPONENT, 5 MODAL_SUBMIT. */
  readonly type: 1 | 2 | 3 | 5
  readonly createdAt: number
  /** The message whose component was used (components, and modals opened from one). */
  readonly messageId: string | undefined
  /** The callback type once answered (inline or through the callback route). */
  callbackType: number | undefined
  callbackBody: Body | undefined
  /** The message the answer created or is (deferred 5: the loading message; 6/7: the component's). */
  originalId: string | undefined
  /** Answered late or wrongly: the platform invalidates the token. */
  invalid: boolean
  /** Follow-ups and @original edits through the interaction's webhook, in order. */
  readonly events: Array<WebhookEvent>
}

export interface OpenModal {
  readonly interactionId: string
  readonly data: Body
  readonly messageId: string | undefined
}

export interface InteractionsState {
  readonly messages: Map<string, BotMessage>
  readonly commands: Map<string, Array<Body>>
  readonly byToken: Map<string, InteractionRecord>
  readonly byId: Map<string, InteractionRecord>
  /** Key `${botId}:${userId}`: the modal the member has open with that bot. */
  readonly modals: Map<string, OpenModal>
  readonly dmChannels: Map<string, { readonly userId: string; readonly botId: string }>
  /** User id → how many more DM posts are refused with 50007 (Infinity: until faults are cleared). */
  readonly closedDms: Map<string, number>
  /** Attachment id → the uploaded file's bytes (served at the attachment's URL, Attachments.ts). */
  readonly files: Map<string, Uint8Array>
  nextId: (prefix: "37" | "38" | "39") => string
}

const states = new WeakMap<DiscordStore, InteractionsState>()

export const interactionsOf = (store: DiscordStore): InteractionsState => {
  const known = states.get(store)
  if (known !== undefined) return known
  let sequence = 0n
  const state: InteractionsState = {
    messages: new Map(),
    commands: new Map(),
    byToken: new Map(),
    byId: new Map(),
    modals: new Map(),
    dmChannels: new Map(),
    closedDms: new Map(),
    files: new Map(),
    // 37… interactions, 38… commands, 39… attachments (store.nextId gives 34… webhooks and 35… messages).
    nextId: (prefix) => `${prefix}${(sequence += 1n).toString().padStart(16, "0")}`
  }
  states.set(store, state)
  return state
}

export const modalKey = (botId: string, userId: string): string => `${botId}:${userId}`

/** Interaction tokens are accepted for 15 minutes (Discord: follow-ups and @original edits). */
export const TOKEN_TTL_MS = 15 * 60 * 1000

/** The platform's deadline for the first answer to an interaction. */
export const ANSWER_DEADLINE_MS = 3000
