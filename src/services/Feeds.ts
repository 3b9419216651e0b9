/**
 * The feed connectors (decisions.md "Feeds"): the identifier and options of a feed resolved against
 * its external source, the chat webhook it posts to resolved or created, the per-module limit, and
 * every write with its audit entry in one transaction. Webhook tokens leave this file only encrypted.
 */
import { Context, Effect, Layer, Option, Redacted, Result } from "effect"
import type { Problem, UpstreamError } from "../domain/Errors.ts"
import { BadRequest, Forbidden, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { DisplayInfo, Feed, FeedCreate, GameLookup, LookupModule, UserLookup } from "../domain/Feed.ts"
import { withDefaults } from "../domain/Feed.ts"
import type { FeedModuleName } from "../domain/Platform.ts"
import { FeedsConfig, parseWebhookPrefixes, parseWebhookUrl } from "./FeedsConfig.ts"
import { AuditLog } from "./AuditLog.ts"
import type { PlatformError, PlatformWebhook } from "./ChatPlatform.ts"
import { ChatPlatform } from "./ChatPlatform.ts"
import { Cipher } from "./Cipher.ts"
import type { ServerAccess } from "./Directory.ts"
import type { SourceError } from "./ExternalSources.ts"
import { ExternalSources } from "./ExternalSources.ts"
import type { FeedRecord, FeedScope } from "./FeedsRepo.ts"
import { FeedsRepo } from "./FeedsRepo.ts"

export type FeedsError = BadRequest | Forbidden | NotFound | UpstreamError

const DISPLAY_MODULES: ReadonlyArray<FeedModuleName> = ["photo", "streaming", "microblog", "video"]
const isLookupModule = (m: FeedModuleName): m is LookupModule => DISPLAY_MODULES.includes(m)

const bad = (path: string, message: string) => BadRequest.of(message, { path })

/** Runs independent checks and reports every 400 together; any other failure wins. */
const collect = <A, B, R1, R2>(
  a: Effect.Effect<A, FeedsError, R1>,
  b: (a: Option.Option<A>) => Effect.Effect<B, FeedsError, R2>
): Effect.Effect<readonly [A, B], FeedsError, R1 | R2> =>
  Effect.gen(function*() {
    const ra = yield* Effect.result(a)
    const rb = yield* Effect.result(b(Result.isSuccess(ra) ? Option.some(ra.success) : Option.none()))
    const failures: Array<FeedsError> = [
      ...(Result.isFailure(ra) ? [ra.failure] : []),
      ...(Result.isFailure(rb) ? [rb.failure] : [])
    ]
    const other = failures.find((e) => e._tag !== "BadRequest")
    if (other !== undefined) return yield* Effect.fail(other)
    const problems: Array<Problem> = failures.flatMap((e) => e._tag === "BadRequest" ? e.problems : [])
    if (problems.length > 0 || !Result.isSuccess(ra) || !Result.isSuccess(rb)) {
      return yield* Effect.fail(BadRequest.many(problems))
    }
    return [ra.success, rb.success] as const
  })

interface ResolvedIdentifier {
  readonly identifier: string
  readonly displayInfo: DisplayInfo | null
  /** forum: the subreddit's flairs (empty when it lists none or the list is not readable). */
  readonly flairs: ReadonlyArray<string>
}

interface ResolvedOptions {
  readonly options: Record<string, unknown>
  /** streaming: names of the `filter_game` ids, in order; null when there is no game filter. */
  readonly gameNames: ReadonlyArray<string> | null
}

type Webhook = PlatformWebhook & { readonly secret: Redacted.Redacted<string> }

export class Feeds extends Context.Service<Feeds, {
  readonly list: (access: ServerAccess, module: FeedModuleName) => Effect.Effect<ReadonlyArray<Feed>, ServiceUnavailable>
  readonly create: (access: ServerAccess, module: FeedModuleName, body: FeedCreate) => Effect.Effect<Feed, FeedsError>
  /** Replaces the options object: an omitted option takes its default. */
  readonly update: (
    access: ServerAccess,
    module: FeedModuleName,
    feedId: string,
    options: Record<string, unknown>
  ) => Effect.Effect<Feed, FeedsError>
  readonly remove: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<void, NotFound | ServiceUnavailable>
  readonly getUserId: (module: LookupModule, name: string) => Effect.Effect<UserLookup, SourceError>
  readonly getGameId: (name: string) => Effect.Effect<GameLookup, SourceError>
}>()("gateway/Feeds") {
  static readonly layerNoConfig = Layer.effect(Feeds, Effect.gen(function*() {
    const config = yield* FeedsConfig
    const repo = yield* FeedsRepo
    const sources = yield* ExternalSources
    const platform = yield* ChatPlatform
    const cipher = yield* Cipher
    const audit = yield* AuditLog
    const prefixes = parseWebhookPrefixes(config.webhookUrlPrefixes)

    // ---- identifier -----------------------------------------------------------------------------

    const notFoundAsBad = (message: string) => (e: NotFound): BadRequest => bad("feed_identifier", `${message} (${e.problems[0]?.message ?? "not found"})`)

    const resolveIdentifier = (module: FeedModuleName, raw: string): Effect.Effect<ResolvedIdentifier, FeedsError> => {
      const input = raw.trim()
      if (isLookupModule(module)) {
        return sources.lookupUser(module, input).pipe(
          Effect.map((u): ResolvedIdentifier => ({
            identifier: u.id,
            displayInfo: { user_name: u.userName, display_name: u.displayName, user_url: u.url },
            flairs: []
          })),
          Effect.catchTag("NotFound", (e) =>
            Effect.fail(notFoundAsBad(`feed_identifier: no ${module === "video" ? "channel" : "user"} "${input}" on the ${module} source`)(e)))
        )
      }
      if (module === "forum") {
        return sources.forum(input).pipe(
          Effect.map((f): ResolvedIdentifier => ({ identifier: f.name, displayInfo: null, flairs: f.flairs })),
          Effect.catchTag("NotFound", (e) => Effect.fail(notFoundAsBad(`feed_identifier: no readable forum "${input}"`)(e)))
        )
      }
      return sources.rss(input).pipe(
        Effect.map((r): ResolvedIdentifier => ({ identifier: r.url, displayInfo: null, flairs: [] })),
        Effect.catchTag("NotFound", (e) => Effect.fail(notFoundAsBad(`feed_identifier: no feed at "${input}"`)(e))),
        Effect.catchTag("BadRequest", (e) =>
          Effect.fail(BadRequest.many(e.problems.map((p) => ({
            message: p.message.startsWith("feed_identifier") ? p.message : `feed_identifier: ${p.message}`,
            additionalProperties: { ...p.additionalProperties, path: "feed_identifier" }
          })))))
      )
    }

    // ---- options --------------------------------------------------------------------------------

    const resolveGames = (values: ReadonlyArray<string>) =>
      Effect.forEach(values, (value) => Effect.result(sources.lookupGame(value.trim())), { concurrency: 4 }).pipe(
        Effect.flatMap((results): Effect.Effect<ReadonlyArray<{ id: string; name: string }>, BadRequest | SourceError> => {
          const problems: Array<Problem> = []
          const games: Array<{ id: string; name: string }> = []
          for (const [i, r] of results.entries()) {
            if (Result.isSuccess(r)) {
              if (!games.some((g) => g.id === r.success.id)) games.push(r.success)
            } else if (r.failure._tag === "NotFound") {
              problems.push({
                message: `webhook_options.filter_game: unknown game "${values[i]}"`,
                additionalProperties: { path: `webhook_options.filter_game[${i}]` }
              })
            } else {
              return Effect.fail(r.failure)
            }
          }
          return problems.length > 0 ? Effect.fail(BadRequest.many(problems)) : Effect.succeed(games)
        })
      )

    /** Decision: flairs are checked when the forum lists some (case-insensitively, stored in its spelling). */
    const checkFlairs = (values: ReadonlyArray<string>, forum: string, flairs: ReadonlyArray<string>) => {
      if (flairs.length === 0) return Effect.succeed(values)
      const problems: Array<Problem> = []
      const out: Array<string> = []
      for (const [i, v] of values.entries()) {
        const match = flairs.find((f) => f.trim().toLowerCase() === v.trim().toLowerCase())
        if (match === undefined) {
          problems.push({
            message: `webhook_options.filter_flair: "${v}" is not a flair of ${forum} (its flairs: ${flairs.slice(0, 25).join(", ")})`,
            additionalProperties: { path: `webhook_options.filter_flair[${i}]` }
          })
        } else if (!out.includes(match)) out.push(match)
      }
      return problems.length > 0 ? Effect.fail(BadRequest.many(problems)) : Effect.succeed(out)
    }

    const resolveOptions = (
      module: FeedModuleName,
      input: Record<string, unknown> | undefined,
      forum: Option.Option<{ readonly name: string; readonly flairs: ReadonlyArray<string> }>
    ): Effect.Effect<ResolvedOptions, FeedsError> =>
      Effect.gen(function*() {
        const options = withDefaults(module, input)
        let gameNames: ReadonlyArray<string> | null = null
        if (module === "streaming" && Array.isArray(options.filter_game)) {
          const games = yield* resolveGames(options.filter_game.map(String))
          options.filter_game = games.map((g) => g.id)
          gameNames = games.map((g) => g.name)
        }
        if (module === "forum" && Array.isArray(options.filter_flair) && Option.isSome(forum)) {
          options.filter_flair = yield* checkFlairs(options.filter_flair.map(String), forum.value.name, forum.value.flairs)
        }
        return { options, gameNames }
      })

    // ---- webhook --------------------------------------------------------------------------------

    const platformFault = (e: PlatformError, what: string): FeedsError =>
      e._tag !== "PlatformRejected"
        ? e
        : e.status === 401
        ? ServiceUnavailable.of("The chat platform refused the bot's credentials.")
        : ServiceUnavailable.of(`The chat platform refused ${what} (${e.status}).`)

    const lacksManageWebhooks = (channelId: string) =>
      Forbidden.of(
        `The bot lacks the MANAGE_WEBHOOKS permission in channel ${channelId}; grant it to the bot or pass webhook_url.`,
        { permission: "MANAGE_WEBHOOKS", path: "webhook_channel" }
      )

    const fromUrl = (access: ServerAccess, body: FeedCreate, url: string): Effect.Effect<Webhook, FeedsError> =>
      Effect.gen(function*() {
        const parsed = parseWebhookUrl(url, prefixes)
        if (Option.isNone(parsed)) {
          return yield* bad(
            "webhook_url",
            "webhook_url: expected a chat-platform webhook URL such as https://discord.com/api/webhooks/{id}/{token}."
          )
        }
        const secret = Redacted.make(parsed.value.token)
        const webhook = yield* platform.getWebhookWithToken(parsed.value.id, secret).pipe(
          Effect.catchTag("PlatformRejected", (e) =>
            Effect.fail(
              e.status >= 400 && e.status < 500 && e.status !== 429
                ? bad("webhook_url", "webhook_url: the chat platform does not know this webhook: it was deleted or the URL is wrong.")
                : platformFault(e, "the webhook lookup")
            ))
        )
        if (webhook.guild_id !== access.serverId) {
          return yield* bad("webhook_url", "webhook_url: the webhook belongs to another server.")
        }
        if (body.webhook_channel !== undefined && webhook.channel_id !== body.webhook_channel) {
          return yield* bad(
            "webhook_channel",
            `webhook_channel: the webhook of webhook_url posts to channel ${webhook.channel_id}, not to ${body.webhook_channel}.`
          )
        }
        return { ...webhook, secret }
      })

    const fromChannel = (access: ServerAccess, channelId: string, name: string): Effect.Effect<Webhook, FeedsError> =>
      Effect.gen(function*() {
        const channel = access.channels.find((c) => c.id === channelId)
        if (channel === undefined) {
          return yield* bad("webhook_channel", `webhook_channel: ${channelId} is not a channel of this server.`)
        }
        if (channel.type !== 0 && channel.type !== 5) {
          return yield* bad("webhook_channel", `webhook_channel: ${channelId} is not a text or news channel.`)
        }
        const onRejected = (what: string) => (e: PlatformError) =>
          Effect.fail<FeedsError>(
            e._tag === "PlatformRejected" && e.status === 403
              ? lacksManageWebhooks(channelId)
              : e._tag === "PlatformRejected" && e.status === 404
              ? bad("webhook_channel", `webhook_channel: the chat platform does not know channel ${channelId}.`)
              : e._tag === "PlatformRejected" && e.status === 400
              ? bad("webhook_channel", `webhook_channel: the chat platform refused to ${what} in channel ${channelId} (e.g. the channel has the most webhooks allowed).`)
              : platformFault(e, what)
          )
        const existing = yield* platform.getChannelWebhooks(access.botToken, channelId).pipe(
          Effect.catch(onRejected("list the webhooks"))
        )
        const own = existing.find((w) => w.application_id === access.botId && w.token !== undefined && w.type === 1)
        const webhook = own ?? (yield* platform.createWebhook(access.botToken, channelId, name).pipe(
          Effect.catch(onRejected("create a webhook"))
        ))
        if (webhook.token === undefined) {
          return yield* ServiceUnavailable.of("The chat platform returned a webhook without its token; retry.")
        }
        if (webhook.guild_id !== null && webhook.guild_id !== access.serverId) {
          return yield* bad("webhook_channel", "webhook_channel: the webhook belongs to another server.")
        }
        return { ...webhook, secret: webhook.token }
      })

    const resolveWebhook = (access: ServerAccess, body: FeedCreate, options: Record<string, unknown>) => {
      if (body.webhook_url !== undefined) return fromUrl(access, body, body.webhook_url)
      if (body.webhook_channel !== undefined) {
        const custom = options["webhook-name"]
        return fromChannel(access, body.webhook_channel, typeof custom === "string" && custom.trim() !== "" ? custom : config.defaultWebhookName)
      }
      return Effect.fail(bad("webhook_channel", "one of webhook_channel and webhook_url is required"))
    }

    // ---- wire -----------------------------------------------------------------------------------

    const toFeed = (r: FeedRecord): Feed => {
      const base = {
        id: r.id,
        feed_identifier: r.feedIdentifier,
        webhook_options: withDefaults(r.module, r.webhookOptions),
        webhook_info: { name: r.webhook.name, avatar: r.webhook.avatar, channel_id: r.webhook.channelId }
      }
      if (!isLookupModule(r.module) || r.displayInfo === null) return base
      const d = r.displayInfo
      const display_info: DisplayInfo = r.module === "streaming"
        ? { user_name: d.user_name, display_name: d.display_name, user_url: d.user_url, game_names: d.game_names ?? null }
        : { user_name: d.user_name, display_name: d.display_name, user_url: d.user_url }
      return { ...base, display_info }
    }

    const scopeOf = (access: ServerAccess, module: FeedModuleName): FeedScope => ({
      botId: access.botId,
      serverId: access.serverId,
      module
    })
    const entry = (access: ServerAccess, module: FeedModuleName, id: string) => ({
      botId: access.botId,
      serverId: access.serverId,
      actor: access.actor,
      module,
      itemIdentifier: Number(id)
    })
    const noSuchFeed = (module: FeedModuleName, id: string) => NotFound.of(`No ${module} feed ${id} on this server.`)
    const limitReached = (module: FeedModuleName, limit: number) =>
      BadRequest.of(`This server already has ${limit} ${module} feeds, the most allowed; delete one first.`, { limit })

    // ---- operations -----------------------------------------------------------------------------

    const create = (access: ServerAccess, module: FeedModuleName, body: FeedCreate) =>
      Effect.gen(function*() {
        const scope = scopeOf(access, module)
        // Fail fast before asking anyone upstream; the insert checks again atomically.
        if ((yield* repo.count(scope)) >= config.maxFeedsPerModule) {
          return yield* limitReached(module, config.maxFeedsPerModule)
        }
        const [ident, opts] = yield* collect(
          resolveIdentifier(module, body.feed_identifier),
          (ident) =>
            resolveOptions(
              module,
              body.webhook_options,
              Option.map(ident, (i) => ({ name: i.identifier, flairs: i.flairs }))
            )
        )
        const webhook = yield* resolveWebhook(access, body, opts.options)
        const tokenEnc = yield* cipher.encrypt(webhook.secret, `feed-webhook:${webhook.id}`)
        const displayInfo = ident.displayInfo === null
          ? null
          : module === "streaming"
          ? { ...ident.displayInfo, game_names: opts.gameNames }
          : ident.displayInfo
        const result = yield* repo.transaction(Effect.gen(function*() {
          const r = yield* repo.insert({
            ...scope,
            feedIdentifier: ident.identifier,
            webhookOptions: opts.options,
            displayInfo,
            webhook: {
              id: webhook.id,
              tokenEnc,
              name: webhook.name ?? "",
              avatar: webhook.avatar,
              channelId: webhook.channel_id
            }
          }, config.maxFeedsPerModule)
          if (r._tag === "Inserted") {
            yield* audit.append({
              ...entry(access, module, r.feed.id),
              eventType: "PUSH",
              eventString:
                `Created ${module} feed ${r.feed.id} for "${ident.identifier}", posting to webhook "${r.feed.webhook.name}" in channel ${r.feed.webhook.channelId}`
            })
          }
          return r
        }))
        if (result._tag === "LimitReached") return yield* limitReached(module, result.limit)
        if (result._tag === "Duplicate") {
          return yield* bad(
            "feed_identifier",
            `feed_identifier: a ${module} feed for "${ident.identifier}" already posts to this webhook (channel ${webhook.channel_id}).`
          )
        }
        return toFeed(result.feed)
      }).pipe(Effect.withSpan("Feeds.create", { attributes: { module } }))

    const update = (access: ServerAccess, module: FeedModuleName, feedId: string, input: Record<string, unknown>) =>
      Effect.gen(function*() {
        const scope = scopeOf(access, module)
        const feed = yield* repo.find(scope, feedId).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(noSuchFeed(module, feedId)), onSome: Effect.succeed }))
        )
        const forum = module === "forum" && Array.isArray(input.filter_flair)
          ? yield* sources.forum(feed.feedIdentifier).pipe(
            Effect.map((f) => Option.some({ name: f.name, flairs: f.flairs })),
            // A forum that went away cannot be checked against: the flairs are kept as given.
            Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
          )
          : Option.none()
        const opts = yield* resolveOptions(module, input, forum)
        const displayInfo = feed.displayInfo === null
          ? null
          : module === "streaming"
          ? { ...feed.displayInfo, game_names: opts.gameNames }
          : feed.displayInfo
        const updated = yield* repo.transaction(Effect.gen(function*() {
          const r = yield* repo.updateOptions(scope, feedId, opts.options, displayInfo)
          if (Option.isNone(r)) return yield* noSuchFeed(module, feedId)
          yield* audit.append({
            ...entry(access, module, feedId),
            eventType: "PATCH",
            eventString: `Updated the options of ${module} feed ${feedId} ("${feed.feedIdentifier}")`
          })
          return r.value
        }))
        return toFeed(updated)
      }).pipe(Effect.withSpan("Feeds.update", { attributes: { module } }))

    const remove = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
      repo.transaction(Effect.gen(function*() {
        const scope = scopeOf(access, module)
        const feed = yield* repo.find(scope, feedId)
        if (Option.isNone(feed) || !(yield* repo.remove(scope, feedId))) return yield* noSuchFeed(module, feedId)
        yield* audit.append({
          ...entry(access, module, feedId),
          eventType: "DELETE",
          eventString: `Deleted ${module} feed ${feedId} ("${feed.value.feedIdentifier}")`
        })
      })).pipe(Effect.withSpan("Feeds.remove", { attributes: { module } }))

    return Feeds.of({
      list: (access, module) => repo.list(scopeOf(access, module)).pipe(Effect.map((rows) => rows.map(toFeed))),
      create,
      update,
      remove,
      getUserId: (module, name) =>
        sources.lookupUser(module, name.trim()).pipe(
          Effect.map((u) => ({ userId: u.id, userName: u.userName, displayName: u.displayName }))
        ),
      getGameId: (name) =>
        sources.lookupGame(name.trim()).pipe(Effect.map((g) => ({ gameId: g.id, gameName: g.name })))
    })
  }))

  /** Needs FeedsRepo, ExternalSources, ChatPlatform, Cipher, AuditLog and AppConfig. */
  static readonly layer = Feeds.layerNoConfig.pipe(Layer.provide(FeedsConfig.layer))
}

