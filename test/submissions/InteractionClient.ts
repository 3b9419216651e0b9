/**
 * Interactions built and signed as the platform sends them (types, member with roles and computed
 * permissions, a token), posted to the gateway's `/interactions/{appClientId}`.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { TestApp } from "../utils/TestApp.ts"
import { BOT1_ID } from "../../src/sandbox/seed/Ids.ts"
import type { Signer } from "./InteractionSigner.ts"

let sequence = 0n
/** A fresh interaction id (a snowflake). */
export const nextId = () => String(900000000000000000n + BigInt(Date.now() % 1_000_000) * 1000n + (sequence += 1n))

export interface As {
  readonly userId: string
  readonly username: string
  readonly roles?: ReadonlyArray<string>
  /** The member's computed permissions (decimal); "0" by default. */
  readonly permissions?: string
  /** The member's nickname in the server (what the server shows instead of the username). */
  readonly nick?: string
}

export const interaction = (
  applicationId: string,
  guildId: string,
  as: As,
  type: number,
  data?: unknown,
  extra: Record<string, unknown> = {}
) => ({
  id: nextId(),
  application_id: applicationId,
  type,
  token: randomBytes(24).toString("base64url"),
  version: 1,
  guild_id: guildId,
  channel_id: "300000000000000001",
  member: {
    user: { id: as.userId, username: as.username, global_name: null, avatar: null },
    roles: as.roles ?? [],
    permissions: as.permissions ?? "0",
    nick: as.nick ?? null
  },
  ...(data === undefined ? {} : { data }),
  ...extra
})

export interface SendOptions {
  readonly signer?: Signer | undefined
  readonly timestamp?: string
  readonly headers?: Record<string, string>
  readonly path?: string
}

/** Posts `body` signed by `signer` (none: unsigned): the status and the parsed answer. */
export const send = (appId: string, body: unknown, options: SendOptions = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const text = typeof body === "string" ? body : JSON.stringify(body)
    const signed = options.signer === undefined ? {} : options.signer.headers(text, options.timestamp)
    const res = yield* Effect.promise(() =>
      fetch(`${app.url}${options.path ?? `/interactions/${appId}`}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...signed, ...options.headers },
        body: text
      })
    )
    const answer = yield* Effect.promise(() => res.text())
    return { status: res.status, body: (answer === "" ? {} : JSON.parse(answer)) as Answer }
  })

/** What the gateway answered: an interaction answer, or the error envelope. */
export interface Answer {
  readonly type?: number
  readonly data?: {
    readonly content?: string
    readonly flags?: number
    readonly title?: string
    readonly custom_id?: string
    readonly components?: ReadonlyArray<Component>
  }
  readonly errors?: ReadonlyArray<{ readonly code: string; readonly message: string }>
}

export interface Component {
  readonly type: number
  readonly custom_id?: string
  readonly label?: string
  readonly description?: string
  readonly content?: string
  readonly style?: number
  readonly value?: string
  readonly min_length?: number
  readonly max_length?: number
  readonly options?: ReadonlyArray<{ readonly label: string; readonly value: string; readonly default?: boolean }>
  readonly component?: Component
  readonly components?: ReadonlyArray<Component>
}

/** The buttons of a message answer, by label. */
export const buttonsOf = (a: Answer) =>
  new Map((a.data?.components ?? []).flatMap((row) => row.components ?? []).filter((c) => c.type === 2).map((c) => [c.label!, c.custom_id!]))

/** A modal's inputs (Label → component), in order. */
export const inputsOf = (a: Answer) => (a.data?.components ?? []).filter((c) => c.type === 18).map((c) => ({ label: c.label!, description: c.description, input: c.component! }))

/** The components a member sends back for a modal: each input filled from `values` (by custom id). */
export const filled = (a: Answer, values: Record<string, string | ReadonlyArray<string>>) =>
  inputsOf(a).map(({ input }) => ({
    type: 18,
    id: 1,
    component: typeof values[input.custom_id!] === "string"
      ? { type: 4, id: 2, custom_id: input.custom_id, value: values[input.custom_id!] }
      : { type: 3, id: 2, custom_id: input.custom_id, values: values[input.custom_id!] ?? [] }
  }))

/** Until the start-up registration has stored BOT1's key: PING answers 200. */
export const waitForKeys = (signer: Signer) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const r = yield* send(BOT1_ID, { id: "1", application_id: BOT1_ID, type: 1, token: "t", version: 1 }, { signer })
      if (r.status === 200) return
      yield* Effect.sleep("50 millis")
    }
    throw new Error("the bot's key was never stored")
  })

