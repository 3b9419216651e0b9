/**
 * The sandbox chat platform: an in-process fake of Discord's HTTP API v10 and OAuth2, speaking
 * Discord's shapes, errors and rate-limit headers. Routes are registered through `sandboxRoute`
 * (SandboxRoute.ts), like every sandbox route.
 */
import { Layer } from "effect"
import { DiscordApiRoutes } from "./DiscordApi.ts"
import { DiscordOAuthRoutes } from "./DiscordOAuth.ts"
import { InteractionsRoutes } from "./interactions/InteractionsRoutes.ts"

export { API as SANDBOX_DISCORD_API } from "./DiscordHttp.ts"
export { AUTHORIZE_PATH as SANDBOX_DISCORD_AUTHORIZE } from "./DiscordOAuth.ts"
export { DiscordState, DiscordStore } from "./DiscordState.ts"

/** Every Discord route; needs `DiscordState` and `SandboxState` (Sandbox.ts provides both). */
export const DiscordRoutes = Layer.mergeAll(DiscordApiRoutes, DiscordOAuthRoutes, InteractionsRoutes)
