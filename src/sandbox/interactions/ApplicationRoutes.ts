/**
 * A bot's platform application: `GET /applications/@me` (PrivateApplicationResponse: its id, name,
 * `verify_key` — the Ed25519 public key —, `interactions_endpoint_url`, bot and owner) and its
 * commands, `PUT /applications/{id}/commands` (bulk overwrite, checked against
 * ApplicationCommandUpdateRequest) and `GET` (ApplicationCommandResponse each). Another bot's
 * application → 403 50001.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { checkSchema } from "../DiscordSchemaCheck.ts"
import { Errors } from "../DiscordHttp.ts"
import type { DiscordContext } from "../DiscordHttp.ts"
import { publicBotUser } from "../DiscordShapes.ts"
import type { DiscordStore } from "../DiscordState.ts"
import type { SeedBot } from "../Seed.ts"
import { ALICE_ID, findUser, guildsOf } from "../Seed.ts"
import { interactionsUrl, publicKeyHex } from "./BotKeys.ts"
import type { Route } from "./ChannelMessages.ts"
import { invalidFormBody } from "./MessageBody.ts"
import { publicUser } from "./MessageShapes.ts"
import { REQUEST_SCHEMAS } from "./RequestSchemas.ts"
import type { Body } from "./State.ts"
import { interactionsOf } from "./State.ts"

const json = (body: unknown) => HttpServerResponse.jsonUnsafe(body)

export const application = (bot: SeedBot, origin: string) => ({
  id: bot.id,
  name: bot.name,
  icon: bot.avatar,
  description: "",
  type: null,
  bot: publicBotUser(bot),
  bot_public: false,
  bot_require_code_grant: false,
  verify_key: publicKeyHex(bot.id),
  flags: 0,
  flags_new: "0",
  redirect_uris: [],
  interactions_endpoint_url: interactionsUrl(origin, bot.id),
  role_connections_verification_url: null,
  owner: publicUser(findUser(ALICE_ID)!),
  approximate_guild_count: guildsOf(bot.id).length,
  approximate_user_install_count: 0,
  approximate_user_authorization_count: 0,
  explicit_content_filter: 0,
  team: null,
  eligible_oauth2_scopes: []
})

/** The bot calling for its own application, else Discord's refusal. */
const ownApplication = (ctx: DiscordContext): SeedBot | HttpServerResponse.HttpServerResponse => {
  if (ctx.principal?.kind !== "bot") return Errors.unauthorized()
  return ctx.params["application_id"] === ctx.principal.bot.id ? ctx.principal.bot : Errors.missingAccess()
}

const commandOf = (store: DiscordStore, bot: SeedBot, request: Body, previous: ReadonlyArray<Body>): Body => {
  const type = typeof request["type"] === "number" ? request["type"] : 1
  const same = previous.find((c) => c["name"] === request["name"] && c["type"] === type)
  return {
    id: typeof same?.["id"] === "string" ? same["id"] : interactionsOf(store).nextId("38"),
    application_id: bot.id,
    version: interactionsOf(store).nextId("38"),
    default_member_permissions: request["default_member_permissions"] ?? null,
    type,
    name: request["name"],
    ...(request["name_localizations"] !== undefined ? { name_localizations: request["name_localizations"] } : {}),
    description: typeof request["description"] === "string" ? request["description"] : "",
    ...(request["description_localizations"] !== undefined ? { description_localizations: request["description_localizations"] } : {}),
    dm_permission: request["dm_permission"] !== false,
    contexts: request["contexts"] ?? null,
    integration_types: request["integration_types"] ?? [0],
    ...(Array.isArray(request["options"]) ? { options: request["options"] } : {}),
    nsfw: request["nsfw"] === true
  }
}

export const applicationRoutes = (store: DiscordStore): ReadonlyArray<Route> => [
  ["GET", "/applications/@me", undefined, (ctx) =>
    Effect.succeed(
      ctx.principal?.kind === "bot"
        ? json(application(ctx.principal.bot, store.config.interactionsOrigin ?? ctx.origin))
        : Errors.unauthorized()
    )],
  ["GET", "/applications/{application_id}/commands", "application_id", (ctx) => {
    const bot = ownApplication(ctx)
    if (!("token" in bot)) return Effect.succeed(bot)
    return Effect.succeed(json(interactionsOf(store).commands.get(bot.id) ?? []))
  }],
  ["PUT", "/applications/{application_id}/commands", "application_id", (ctx) =>
    Effect.gen(function*() {
      const bot = ownApplication(ctx)
      if (!("token" in bot)) return bot
      const raw = yield* ctx.request.json.pipe(Effect.catch(() => Effect.succeed(undefined)))
      if (raw === undefined) return Errors.invalidJson()
      if (!Array.isArray(raw)) return invalidFormBody([`$: expected array, got ${typeof raw}`])
      if (raw.length > 130) return invalidFormBody([`$: more than 130 items`])
      const problems = raw.flatMap((c, i) =>
        checkSchema(REQUEST_SCHEMAS, "ApplicationCommandUpdateRequest", c).map((p) => p.replace(/^\$/, `$[${i}]`))
      )
      if (problems.length > 0) return invalidFormBody(problems)
      const previous = interactionsOf(store).commands.get(bot.id) ?? []
      const commands = (raw as ReadonlyArray<Body>).map((c) => commandOf(store, bot, c, previous))
      interactionsOf(store).commands.set(bot.id, commands)
      return json(commands)
    })]
]
