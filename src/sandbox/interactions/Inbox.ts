/**
 * What a person would see, for tests and newcomers (control routes: never counted nor faulted).
 * `GET /sandbox/discord/messages?webhook_id=&channel_id=` → `{ "messages": [...] }`, oldest first:
 * messages executed through webhooks (`{ id, webhook_id, channel_id, body, edits: [], at }`, `body`
 * exactly as sent) beside the bots' own messages in channels, interaction answers and follow-ups
 * included (`{ id, bot_id, channel_id, guild_id, interaction_id, ephemeral_for, body, edits, at,
 * edited_at, deleted }`, `body` the latest version, attachments by name, `edits` the earlier
 * versions `{ body, at }`); `DELETE` empties both. `GET /sandbox/discord/dms?user_id=` → the direct
 * messages, `{ id, user_id, bot_id, channel_id, body, edits, at }`.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import type { DiscordStore } from "../DiscordState.ts"
import { inboxBody } from "./MessageShapes.ts"
import type { BotMessage } from "./State.ts"
import { interactionsOf } from "./State.ts"

const iso = (at: number) => new Date(at).toISOString()
const noStore = { headers: { "cache-control": "no-store" } }

const edits = (m: BotMessage) => m.versions.slice(0, -1).map((v) => ({ body: inboxBody(v.body), at: iso(v.at) }))

const botEntry = (m: BotMessage) => ({
  id: m.id,
  bot_id: m.botId,
  channel_id: m.channelId,
  guild_id: m.guildId ?? null,
  interaction_id: m.interactionId ?? null,
  ephemeral_for: m.ephemeralFor ?? null,
  body: inboxBody(m.versions.at(-1)!.body),
  edits: edits(m),
  at: iso(m.versions[0]!.at),
  edited_at: m.versions.length > 1 ? iso(m.versions.at(-1)!.at) : null,
  deleted: m.deleted
})

export const InboxRoutes = (store: DiscordStore) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      yield* router.add("GET", "/sandbox/discord/messages", (request) =>
        Effect.sync(() => {
          const q = new URL(request.url, "http://sandbox").searchParams
          const webhookId = q.get("webhook_id")
          const channelId = q.get("channel_id")
          const webhook = store.messages
            .filter((m) => (webhookId === null || m.webhookId === webhookId) && (channelId === null || m.channelId === channelId))
            .map((m) => ({
              id: m.id,
              webhook_id: m.webhookId,
              channel_id: m.channelId,
              // delivery.md §10: where it went and whether it was published; `body` keeps thread_name and applied_tags as sent.
              ...(m.threadId === undefined ? {} : { thread_id: m.threadId }),
              flags: m.flags ?? 0,
              body: m.body,
              edits: [],
              at: iso(m.at)
            }))
          const bots = webhookId !== null
            ? []
            : [...interactionsOf(store).messages.values()]
              .filter((m) => m.dmUserId === undefined && (channelId === null || m.channelId === channelId))
              .map(botEntry)
          const messages = [...webhook, ...bots].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
          return HttpServerResponse.jsonUnsafe({ messages }, noStore)
        }))
      yield* router.add("DELETE", "/sandbox/discord/messages", Effect.sync(() => {
        store.messages.splice(0)
        const bots = interactionsOf(store).messages
        for (const [id, m] of bots) if (m.dmUserId === undefined) bots.delete(id)
        return HttpServerResponse.empty()
      }))
      yield* router.add("GET", "/sandbox/discord/dms", (request) =>
        Effect.sync(() => {
          const userId = new URL(request.url, "http://sandbox").searchParams.get("user_id")
          const messages = [...interactionsOf(store).messages.values()]
            .filter((m) => m.dmUserId !== undefined && (userId === null || m.dmUserId === userId))
            .map((m) => ({
              id: m.id,
              user_id: m.dmUserId,
              bot_id: m.botId,
              channel_id: m.channelId,
              body: inboxBody(m.versions.at(-1)!.body),
              edits: edits(m),
              at: iso(m.versions[0]!.at),
              deleted: m.deleted
            }))
          return HttpServerResponse.jsonUnsafe({ messages }, noStore)
        }))
    })
  )
