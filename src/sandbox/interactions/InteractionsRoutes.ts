/**
 * The sandbox platform's side of HTTP interactions (forms-runtime.md §7), mounted with the other
 * Discord routes: the applications and their commands, bots' channel and direct messages, the
 * interaction callback and webhook routes (all Discord API routes: counted, rate-limited, faultable
 * by their names, e.g. `"POST /channels/{id}/messages"`), the attachments' files, the inboxes and
 * the member player.
 */
import { Effect, Layer } from "effect"
import { API, discordHandler, routerPath } from "../DiscordHttp.ts"
import { DiscordState } from "../DiscordState.ts"
import { sandboxRoute } from "../SandboxRoute.ts"
import { SEED } from "../Seed.ts"
import { applicationRoutes } from "./ApplicationRoutes.ts"
import { AttachmentRoutes } from "./Attachments.ts"
import { interactionsUrl, publicKeyHex } from "./BotKeys.ts"
import { channelRoutes } from "./ChannelMessages.ts"
import { InboxRoutes } from "./Inbox.ts"
import { interactionRoutes } from "./InteractionWebhook.ts"
import { PlayerRoute } from "./Player.ts"

export { CONTROL_ROUTES } from "./ControlRoutes.ts"
export { interactionFollowup } from "./InteractionWebhook.ts"
export { interactionsOf } from "./State.ts"

export const InteractionsRoutes = Layer.unwrap(Effect.gen(function*() {
  const store = yield* DiscordState
  const api = [...applicationRoutes(store), ...channelRoutes(store), ...interactionRoutes(store)].map(([method, template, major, handler]) => {
    const name = `${method} ${template}`
    return sandboxRoute(method, `${API}${routerPath(template)}`, discordHandler(store, name, major, handler), { name })
  })
  return Layer.mergeAll(InboxRoutes(store), AttachmentRoutes(store), PlayerRoute, ...api)
}))

/** The bots as `GET /sandbox` lists them: their application's public key and interactions URL. */
export const botsListing = (origin: string) =>
  SEED.bots.map((b) => ({ id: b.id, name: b.name, public_key: publicKeyHex(b.id), interactions_url: interactionsUrl(origin, b.id) }))
