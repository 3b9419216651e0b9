/**
 * Until the sandbox serves them (its helper's work): the chat platform calls of the forms runtime,
 * decorated onto the sandbox-backed client — each bot's application (its key from a test signer),
 * its commands, channel messages (create, edit; the platform's `enforce_nonce`), DMs — recorded for
 * the test to read, with the faults a test sets (a channel's 403/404, closed DMs).
 */
import { Effect, Layer, Redacted } from "effect"
import { ChatPlatform, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import type { PlatformMessageBody } from "../../src/services/platform/ChatPlatform.ts"
import { SEED } from "../../src/sandbox/Seed.ts"
import type { Signer } from "./InteractionSigner.ts"
import { makeSigner } from "./InteractionSigner.ts"

export interface RecordedMessage {
  readonly id: string
  readonly channelId: string
  body: PlatformMessageBody
  readonly edits: Array<PlatformMessageBody>
}

export interface Recorder {
  readonly signers: Map<string, Signer>
  readonly commands: Map<string, Array<ReadonlyArray<unknown>>>
  readonly messages: Array<RecordedMessage>
  readonly dms: Array<{ readonly userId: string; readonly content: string }>
  /** channel id → status the platform answers a post there with. */
  readonly refusingChannels: Map<string, 403 | 404>
  readonly closedDms: Set<string>
  /** Calls of createMessage (including the ones answered from a nonce). */
  posts: number
}

export const makeRecorder = (): Recorder => ({
  signers: new Map(SEED.bots.map((b) => [b.id, makeSigner()])),
  commands: new Map(),
  messages: [],
  dms: [],
  refusingChannels: new Map(),
  closedDms: new Set(),
  posts: 0
})

const botOf = (token: string) => SEED.bots.find((b) => b.token === token)
const refuse = (status: number, message: string, code: number) => Effect.fail(new PlatformRejected({ status, message, code }))

export const patchChat = (r: Recorder) =>
  Layer.effect(ChatPlatform, Effect.gen(function*() {
    const chat = yield* ChatPlatform
    let sequence = 0
    const nonces = new Map<string, string>()
    return ChatPlatform.of({
      ...chat,
      getApplication: (token) => {
        const bot = botOf(Redacted.value(token))
        return bot === undefined ? refuse(401, "401: Unauthorized", 0) : Effect.succeed({ id: bot.id, verify_key: r.signers.get(bot.id)!.publicKeyHex })
      },
      putCommands: (_token, applicationId, commands) =>
        Effect.sync(() => {
          const list = r.commands.get(applicationId) ?? []
          list.push(commands)
          r.commands.set(applicationId, list)
        }),
      createMessage: (_token, channelId, body) =>
        Effect.suspend(() => {
          r.posts += 1
          const refusal = r.refusingChannels.get(channelId)
          if (refusal === 403) return refuse(403, "Missing Access", 50001)
          if (refusal === 404) return refuse(404, "Unknown Channel", 10003)
          const known = body.enforce_nonce === true && body.nonce !== undefined ? nonces.get(body.nonce) : undefined
          if (known !== undefined) return Effect.succeed(known)
          sequence += 1
          const id = `37${String(sequence).padStart(16, "0")}`
          if (body.nonce !== undefined) nonces.set(body.nonce, id)
          r.messages.push({ id, channelId, body, edits: [] })
          return Effect.succeed(id)
        }),
      editMessage: (_token, channelId, messageId, body) =>
        Effect.suspend(() => {
          const m = r.messages.find((x) => x.id === messageId && x.channelId === channelId)
          if (m === undefined) return refuse(404, "Unknown Message", 10008)
          m.edits.push(m.body)
          m.body = { ...m.body, ...body }
          return Effect.void
        }),
      sendDirectMessage: (_token, userId, body) =>
        Effect.suspend(() => {
          if (r.closedDms.has(userId)) return refuse(403, "Cannot send messages to this user", 50007)
          r.dms.push({ userId, content: body.content ?? "" })
          return Effect.succeed(String(r.dms.length))
        })
    })
  }))
