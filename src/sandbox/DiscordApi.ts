/**
 * The sandbox's Discord API v10 routes (users, guilds, channels, webhooks) under
 * `/sandbox/discord/api/v10`. Route names (stats, faults, buckets) are `"<METHOD> <template>"` with
 * the template relative to the API base, e.g. `"GET /guilds/{id}"`.
 */
import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import type { DiscordContext, Principal } from "./DiscordHttp.ts"
import { API, discordError, discordHandler, Errors, routerPath } from "./DiscordHttp.ts"
import { checkMessage } from "./DiscordMessage.ts"
import * as Shapes from "./DiscordShapes.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { DiscordState, randomToken } from "./DiscordState.ts"
import { interactionFollowup } from "./interactions/InteractionsRoutes.ts"
import { channelAnswer, ForumTagsControl, threadRoutes, webhookTarget } from "./DiscordThreads.ts"
import { botGuild, botOnly, fail, json } from "./DiscordRoutes.ts"
import type { Handler, Method, Options } from "./DiscordRoutes.ts"
import { sandboxRoute } from "./SandboxRoute.ts"
import type { SeedBot, SeedGuild, SeedWebhook } from "./Seed.ts"
import { findChannel, guildsOf, PermissionBits, SEED } from "./Seed.ts"

const anyPrincipal = (handler: (ctx: DiscordContext, principal: Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
(ctx: DiscordContext) => ctx.principal ? handler(ctx, ctx.principal) : fail(Errors.unauthorized())

const canManageWebhooks = (store: DiscordStore, guild: SeedGuild, bot: SeedBot): boolean =>
  ((store.permissionsOf(guild, bot.id) ?? 0n) & PermissionBits.MANAGE_WEBHOOKS) !== 0n

const creatorOf = (w: SeedWebhook) => SEED.bots.find((b) => b.id === w.applicationId)

/** A webhook the bot may manage: exists, in a guild it is in, with MANAGE_WEBHOOKS there. */
const managedWebhook = (store: DiscordStore, bot: SeedBot, webhookId: string | undefined) => {
  const webhook = webhookId ? store.webhooks.get(webhookId) : undefined
  const guild = webhook ? botGuild(bot, webhook.guildId) : undefined
  if (!webhook || !guild) return { error: Errors.unknownWebhook() } as const
  if (!canManageWebhooks(store, guild, bot)) return { error: Errors.missingPermissions() } as const
  return { webhook } as const
}

/**
 * A webhook addressed by id and token (no authorization needed): unknown id 404 10015; a wrong token
 * 401 50027 when executing, 404 10015 on the other token routes (what the ChatPlatform contract
 * expects; Discord itself answers 50027 there too).
 */
const tokenWebhook = (store: DiscordStore, ctx: DiscordContext, wrongToken: "50027" | "10015" = "10015") => {
  const webhook = ctx.params["id"] ? store.webhooks.get(ctx.params["id"]) : undefined
  if (!webhook) return { error: Errors.unknownWebhook() } as const
  if (webhook.token === ctx.params["token"]) return { webhook } as const
  return { error: wrongToken === "50027" ? Errors.invalidWebhookToken() : Errors.unknownWebhook() } as const
}

const readJson = (ctx: DiscordContext) =>
  ctx.request.json.pipe(
    Effect.map((body): { readonly ok: true; readonly body: unknown } => ({ ok: true, body })),
    Effect.catch(() => Effect.succeed({ ok: false } as const))
  )

const invalidName = (message: string) =>
  discordError(400, "Invalid Form Body", 50035, {
    errors: { name: { _errors: [{ code: "BASE_TYPE_BAD_LENGTH", message }] } }
  })


export const routes = (store: DiscordStore): ReadonlyArray<readonly [Method, string, string | undefined, Handler, Options?]> => [
  [
    "GET",
    "/users/@me",
    undefined,
    anyPrincipal((_, p) => json(p.kind === "bot" ? Shapes.botUser(p.bot) : Shapes.userPII(p.user, p.scopes)))
  ],
  [
    "GET",
    "/users/@me/guilds",
    undefined,
    anyPrincipal((ctx, p) => {
      if (p.kind === "user" && !p.scopes.has("guilds")) return fail(Errors.missingAccess())
      const callerId = p.kind === "bot" ? p.bot.id : p.user.id
      const limit = Math.min(200, Math.max(1, Number(ctx.query.get("limit") ?? "200") || 200))
      const after = ctx.query.get("after")
      const before = ctx.query.get("before")
      const list = guildsOf(callerId)
        .filter((g) => (after ? BigInt(g.id) > BigInt(after) : true) && (before ? BigInt(g.id) < BigInt(before) : true))
        .slice(0, limit)
        .map((g) => Shapes.myGuild(g, callerId, store.permissionsOf(g, callerId) ?? 0n))
      return json(list)
    })
  ],
  [
    "GET",
    "/guilds/{id}",
    "id",
    botOnly((ctx, bot) => {
      const guild = botGuild(bot, ctx.params["id"])
      return guild ? json(Shapes.guild(guild, ctx.query.get("with_counts") === "true")) : fail(Errors.unknownGuild())
    })
  ],
  [
    "GET",
    "/guilds/{id}/channels",
    "id",
    botOnly((ctx, bot) => {
      const guild = botGuild(bot, ctx.params["id"])
      return guild ? json(guild.channels.map((c) => Shapes.channel(guild, c))) : fail(Errors.unknownGuild())
    })
  ],
  [
    "GET",
    "/guilds/{id}/roles",
    "id",
    botOnly((ctx, bot) => {
      const guild = botGuild(bot, ctx.params["id"])
      return guild ? json(guild.roles.map(Shapes.role)) : fail(Errors.unknownGuild())
    })
  ],
  [
    "GET",
    "/channels/{id}",
    "id",
    botOnly((ctx, bot) => {
      const id = ctx.params["id"] ?? ""
      // A thread or forum post as the threads list shows it, a forum with its tags now (DiscordThreads.ts), a channel.
      const found = channelAnswer(store, id)
      return found && botGuild(bot, found.guildId) ? json(found.body) : fail(Errors.unknownChannel())
    })
  ],
  [
    "GET",
    "/channels/{id}/webhooks",
    "id",
    botOnly((ctx, bot) => {
      const found = ctx.params["id"] ? findChannel(ctx.params["id"]) : undefined
      if (!found) return fail(Errors.unknownChannel())
      if (!found.guild.botIds.includes(bot.id)) return fail(Errors.missingAccess())
      if (!canManageWebhooks(store, found.guild, bot)) return fail(Errors.missingPermissions())
      const list = [...store.webhooks.values()].filter((w) => w.channelId === found.channel.id)
      return json(list.map((w) => Shapes.webhook(w, creatorOf(w), ctx.origin)))
    })
  ],
  [
    "POST",
    "/channels/{id}/webhooks",
    "id",
    botOnly((ctx, bot) =>
      Effect.gen(function*() {
        const found = ctx.params["id"] ? findChannel(ctx.params["id"]) : undefined
        if (!found) return Errors.unknownChannel()
        if (!found.guild.botIds.includes(bot.id)) return Errors.missingAccess()
        if (!canManageWebhooks(store, found.guild, bot)) return Errors.missingPermissions()
        if (found.channel.type === 4) return discordError(400, "Cannot execute action on this channel type", 50024)
        const parsed = yield* readJson(ctx)
        if (!parsed.ok) return Errors.invalidJson()
        const body = parsed.body
        const name = typeof body === "object" && body !== null && "name" in body ? body.name : undefined
        if (typeof name !== "string" || name.length < 1 || name.length > 80) {
          return invalidName("Must be between 1 and 80 in length.")
        }
        if (/clyde|discord/i.test(name)) return invalidName("Webhook names cannot contain \"clyde\" or \"discord\".")
        const inChannel = [...store.webhooks.values()].filter((w) => w.channelId === found.channel.id).length
        if (inChannel >= store.config.maxWebhooksPerChannel) {
          return discordError(400, `Maximum number of webhooks reached (${store.config.maxWebhooksPerChannel})`, 30007)
        }
        const webhook: SeedWebhook = {
          id: store.nextId("34"),
          token: randomToken(51),
          name,
          avatar: null,
          guildId: found.guild.id,
          channelId: found.channel.id,
          applicationId: bot.id
        }
        store.webhooks.set(webhook.id, webhook)
        return HttpServerResponse.jsonUnsafe(Shapes.webhook(webhook, bot, ctx.origin))
      })
    )
  ],
  [
    "GET",
    "/webhooks/{id}",
    "id",
    botOnly((ctx, bot) => {
      const found = managedWebhook(store, bot, ctx.params["id"])
      return found.error ? fail(found.error) : json(Shapes.webhook(found.webhook, creatorOf(found.webhook), ctx.origin))
    })
  ],
  [
    "DELETE",
    "/webhooks/{id}",
    "id",
    botOnly((ctx, bot) => {
      const found = managedWebhook(store, bot, ctx.params["id"])
      if (found.error) return fail(found.error)
      store.webhooks.delete(found.webhook.id)
      return Effect.succeed(HttpServerResponse.empty())
    })
  ],
  [
    "GET",
    "/webhooks/{id}/{token}",
    "id",
    (ctx) => {
      const found = tokenWebhook(store, ctx)
      // Discord omits `user` when the webhook is fetched with its token.
      return found.error ? fail(found.error) : json(Shapes.webhook(found.webhook, undefined, ctx.origin))
    }
  ],
  [
    "DELETE",
    "/webhooks/{id}/{token}",
    "id",
    (ctx) => {
      const found = tokenWebhook(store, ctx)
      if (found.error) return fail(found.error)
      store.webhooks.delete(found.webhook.id)
      return Effect.succeed(HttpServerResponse.empty())
    }
  ],
  [
    "POST",
    "/webhooks/{id}/{token}",
    "id",
    (ctx) =>
      // An interaction's token: a follow-up message (interactions/InteractionWebhook.ts).
      interactionFollowup(store, ctx) ?? Effect.gen(function*() {
        const found = tokenWebhook(store, ctx, "50027")
        if (found.error) return found.error
        const webhook = found.webhook
        const parsed = yield* readJson(ctx)
        if (!parsed.ok) return Errors.invalidJson()
        const checked = checkMessage(parsed.body)
        if (checked.error) return checked.error
        const body = checked.body
        // Execute Webhook's thread_id, or the post a forum's webhook opens (its id is the message's): DiscordThreads.ts.
        const id = store.nextId("35")
        const target = webhookTarget(store, webhook, ctx.query.get("thread_id") ?? undefined, body as Record<string, unknown>, { id, at: ctx.now })
        if ("error" in target) return target.error
        const into = target.into
        const message = {
          id,
          webhookId: webhook.id,
          channelId: webhook.channelId,
          guildId: webhook.guildId,
          body,
          at: ctx.now,
          ...(into === undefined ? {} : { threadId: into })
        }
        store.messages.push(message)
        if (ctx.query.get("wait") !== "true") return HttpServerResponse.empty()
        return HttpServerResponse.jsonUnsafe(Shapes.webhookMessage(message, webhook, body))
      }),
    // Webhook buckets belong to the webhook (id and token), whoever executes it.
    { perResource: ["id", "token"] }
  ]
]

/** The Discord API routes, with rate limits; registered through the sandbox's `sandboxRoute`. */
export const DiscordApiRoutes = Layer.unwrap(Effect.gen(function*() {
  const store = yield* DiscordState
  // Channel messages, direct messages and interactions: interactions/InteractionsRoutes.ts.
  const layers = [...routes(store), ...threadRoutes(store)].map(([method, template, major, handler, options]) => {
    const name = `${method} ${template}`
    return sandboxRoute(method, `${API}${routerPath(template)}`, discordHandler(store, name, major, handler, options), { name })
  })
  return Layer.mergeAll(
    // Unknown API paths answer like Discord.
    sandboxRoute("*", `${API}/*`, Effect.succeed(Errors.notFound()), { name: "* unknown" }),
    ForumTagsControl,
    ...layers
  )
}))
