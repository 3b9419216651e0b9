/**
 * The feed connectors (decisions.md "Feeds"): a feed's identifier and options resolved against its
 * external source (FeedsSource.ts), the chat webhook it posts to resolved or created
 * (FeedsWebhook.ts) and whether it posts in a forum (FeedsForum.ts), the per-module limit, and every
 * write with its audit entry in one transaction.
 * Options travel typed per module (`WebhookOptions<M>`) from the handler to the repo and back.
 * Webhook tokens leave this file only encrypted. Delivery hears of creates (the source and its
 * first poll) and of the re-enabling PATCH of a disabled feed through FeedDelivery, and answers the
 * status route; a delete needs no call (a source without active feeds is not polled).
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { BadRequest, NotFound } from "../../domain/infra/Errors.ts"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { DisplayInfo, Feed, FeedCreate, GameLookup, LookupModule, UserLookup, WebhookOptionsInput } from "../../domain/feeds/Feed.ts"
import type { FeedStatus } from "../../domain/feeds/FeedStatus.ts"
import { isLookupModule, withDefaults } from "../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import { Cipher } from "../infra/Cipher.ts"
import type { ServerAccess } from "../platform/Directory.ts"
import { FeedDelivery } from "../delivery/FeedDelivery.ts"
import type { SourceError } from "../sources/ExternalSources.ts"
import { FeedsConfig } from "./FeedsConfig.ts"
import type { Judged } from "./FeedsBody.ts"
import { refusedCreate, refusedUpdate } from "./FeedsBody.ts"
import type { FeedsError } from "./FeedsProblems.ts"
import { bad, besides, collect, skipped } from "./FeedsProblems.ts"
import type { FeedRecord, FeedScope } from "./FeedsRepo.ts"
import { FeedsRepo } from "./FeedsRepo.ts"
import { FeedsSource } from "./FeedsSource.ts"
import { FeedsForum } from "./FeedsForum.ts"
import { FeedsPosting } from "./FeedsPosting.ts"
import { FeedsWebhook } from "./FeedsWebhook.ts"

export type { FeedsError } from "./FeedsProblems.ts"
export type { Judged, Refused } from "./FeedsBody.ts"

export class Feeds extends Context.Service<Feeds, {
  readonly list: <M extends FeedModuleName>(access: ServerAccess, module: M) => Effect.Effect<ReadonlyArray<Feed<M>>, ServiceUnavailable>
  /**
   * `body` as the module's create schema judged it; a refused body still gets every other check, on
   * its well-formed fields, in the same 400 (FeedsBody.ts), and nothing is written.
   */
  readonly create: <M extends FeedModuleName>(access: ServerAccess, module: M, body: Judged<FeedCreate<M>>) => Effect.Effect<Feed<M>, FeedsError>
  /** Replaces the options object: an omitted option takes its default. A refused body: as for `create`. */
  readonly update: <M extends FeedModuleName>(
    access: ServerAccess,
    module: M,
    feedId: string,
    options: Judged<WebhookOptionsInput<M>>
  ) => Effect.Effect<Feed<M>, FeedsError>
  readonly remove: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<void, NotFound | ServiceUnavailable>
  /** Delivery status (delivery.md §5). */
  readonly status: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<FeedStatus, NotFound | ServiceUnavailable>
  readonly getUserId: (module: LookupModule, name: string) => Effect.Effect<UserLookup, SourceError>
  readonly getGameId: (name: string) => Effect.Effect<GameLookup, SourceError>
}>()("gateway/Feeds") {
  /** Needs FeedsConfig, FeedsRepo, ExternalSources, ChatPlatform, Cipher and AuditLog. */
  static readonly layer = Layer.effect(Feeds, Effect.gen(function*() {
    const config = yield* FeedsConfig
    const repo = yield* FeedsRepo
    const cipher = yield* Cipher
    const audit = yield* AuditLog
    const source = yield* FeedsSource.make
    const webhooks = yield* FeedsWebhook.make
    const posting = yield* FeedsPosting.make
    const forum = yield* FeedsForum.make
    const delivery = yield* FeedDelivery

    const scopeOf = <M extends FeedModuleName>(access: ServerAccess, module: M): FeedScope<M> => ({
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
    /** streaming's display carries the names of its `filter_game` ids. */
    const withGames = (module: FeedModuleName, display: DisplayInfo | null, gameNames: ReadonlyArray<string> | null) =>
      display === null ? null : module === "streaming" ? { ...display, game_names: gameNames } : display

    const create = <M extends FeedModuleName>(access: ServerAccess, module: M, judged: Judged<FeedCreate<M>>) =>
      Effect.gen(function*() {
        const scope = scopeOf(access, module)
        // A body its schema refused: the checks run on its well-formed fields, beside its problems.
        const { parts: body, problems } = Result.isSuccess(judged)
          ? { parts: judged.success, problems: [] }
          : refusedCreate(module, judged.failure)
        // Every check runs and every 400 comes in one answer (decisions.md "Errors"): the body's
        // schema, the limit (the insert checks it again atomically), the source, the options and the
        // webhook; a webhook is created only once all of them passed.
        const limit = Effect.flatMap(repo.count(scope), (n) =>
          n >= config.maxFeedsPerModule ? Effect.fail(limitReached(module, config.maxFeedsPerModule)) : Effect.void)
        const identifier = body.feed_identifier === undefined ? skipped : source.identifier(module, body.feed_identifier)
        const webhookCheck = body.webhook_url === undefined && body.webhook_channel === undefined && problems.length > 0
          ? skipped
          : webhooks.check(access, body)
        const [[ident, opts], [, [checked, [, forumTags]]]] = yield* besides(
          problems,
          collect(
            collect(
              identifier,
              (ident) => source.options(module, body.webhook_options, Option.map(ident, (i) => ({ name: i.identifier, flairs: i.flairs })))
            ),
            () =>
              collect(limit, () =>
                collect(webhookCheck, (checked) => {
                  // The options that need the server (delivery.md §10), against the channel the webhook posts to.
                  const channelId = Option.match(Option.flatten(checked), { onNone: () => body.webhook_channel, onSome: (w) => w.channel_id })
                  // And whether that channel is a forum (FeedsForum.ts), once the webhook passed its check.
                  return collect(
                    posting.check(access, body.webhook_options, channelId),
                    () => Option.isNone(checked) || channelId === undefined ? Effect.succeed(null) : forum.read(access, channelId)
                  )
                }))
          )
        )
        const webhook = Option.isSome(checked) ? checked.value : yield* webhooks.resolve(access, body, opts.options["webhook-name"])
        const tokenEnc = yield* cipher.encrypt(webhook.secret, `feed-webhook:${webhook.id}`)
        const result = yield* repo.transaction(Effect.gen(function*() {
          const r = yield* repo.insert({
            ...scope,
            feedIdentifier: ident.identifier,
            webhookOptions: opts.options,
            displayInfo: withGames(module, ident.displayInfo, opts.gameNames),
            webhook: { id: webhook.id, tokenEnc, name: webhook.name ?? "", avatar: webhook.avatar, channelId: webhook.channel_id, forumTags }
          }, config.maxFeedsPerModule)
          if (r._tag !== "Inserted") return { ...r, sourceId: Option.none<string>() }
          // The source exists with the feed (one transaction): the scheduler can never miss it.
          const sourceId = yield* delivery.attach({ module, identifier: ident.identifier })
          yield* audit.append({
            ...entry(access, module, r.feed.id),
            eventType: "PUSH",
            eventString:
              `Created ${module} feed ${r.feed.id} for "${ident.identifier}", posting to webhook "${r.feed.webhook.name}" in channel ${r.feed.webhook.channelId}`
          })
          return { ...r, sourceId }
        }))
        if (result._tag === "LimitReached") return yield* limitReached(module, result.limit)
        if (result._tag === "Duplicate") {
          return yield* bad(
            "feed_identifier",
            `feed_identifier: a ${module} feed for "${ident.identifier}" already posts to this webhook (channel ${webhook.channel_id}).`
          )
        }
        if (Option.isSome(result.sourceId)) yield* delivery.start(result.sourceId.value)
        return toFeed(result.feed)
      }).pipe(Effect.withSpan("Feeds.create", { attributes: { module } }))

    const update = <M extends FeedModuleName>(access: ServerAccess, module: M, feedId: string, judged: Judged<WebhookOptionsInput<M>>) =>
      Effect.gen(function*() {
        const scope = scopeOf(access, module)
        // 404 before 400, as for forms: a feed of another server is never there, whatever the body says.
        const feed = yield* repo.find(scope, feedId).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(noSuchFeed(module, feedId)), onSome: Effect.succeed }))
        )
        const { options: input, problems } = Result.isSuccess(judged)
          ? { options: judged.success, problems: [] }
          : refusedUpdate(module, judged.failure)
        // A PATCH of a disabled feed checks its webhook again and re-enables it (delivery.md §4): that
        // check's 400 comes with the options' and the schema's.
        const disabled = (yield* delivery.state(feedId)).state === "disabled"
        // Its webhook's forum is read again (a tag added or renamed since counts from now: FeedsForum.ts).
        const [opts, [, [, forumTags]]] = yield* besides(
          problems,
          collect(
            input === undefined ? skipped : source.optionsOf(module, feed.feedIdentifier, input),
            () =>
              collect(
                input === undefined ? Effect.void : posting.check(access, input, feed.webhook.channelId),
                () => collect(disabled ? recheck(access, feed) : Effect.void, () => forum.read(access, feed.webhook.channelId))
              )
          )
        )
        const updated = yield* repo.transaction(Effect.gen(function*() {
          const display = withGames(module, feed.displayInfo, opts.gameNames)
          const r = yield* repo.updateOptions(scope, feedId, opts.options, display, forumTags)
          if (Option.isNone(r)) return yield* noSuchFeed(module, feedId)
          const sourceId = disabled ? yield* delivery.reenable(feedId) : Option.none<string>()
          yield* audit.append({
            ...entry(access, module, feedId),
            eventType: "PATCH",
            eventString: `Updated the options of ${module} feed ${feedId} ("${feed.feedIdentifier}")${
              disabled ? "; re-enabled it, its webhook answers again" : ""
            }`
          })
          return { feed: r.value, sourceId }
        }))
        if (Option.isSome(updated.sourceId)) yield* delivery.pollNow(updated.sourceId.value)
        return toFeed(updated.feed)
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
        // Its source needs no call: with no feed left (or all disabled) it is not polled any more.
      })).pipe(Effect.withSpan("Feeds.remove", { attributes: { module } }))

    /** The stored webhook of a disabled feed, asked again before it is re-enabled. */
    const recheck = (access: ServerAccess, feed: FeedRecord) =>
      cipher.decrypt(feed.webhook.tokenEnc, `feed-webhook:${feed.webhook.id}`).pipe(
        Effect.mapError(() =>
          bad("webhook_url", "webhook_url: the feed's webhook token cannot be read with the configured keys; delete the feed and create it again.")
        ),
        Effect.flatMap((token) => webhooks.recheck(access, feed.webhook.id, token))
      )

    const status = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
      Effect.gen(function*() {
        const feed = yield* repo.find(scopeOf(access, module), feedId)
        if (Option.isNone(feed)) return yield* noSuchFeed(module, feedId)
        return yield* delivery.status(feedId, { module, identifier: feed.value.feedIdentifier })
      }).pipe(Effect.withSpan("Feeds.status", { attributes: { module } }))

    return Feeds.of({
      list: (access, module) => repo.list(scopeOf(access, module)).pipe(Effect.map((rows) => rows.map(toFeed))),
      create,
      update,
      remove,
      status,
      getUserId: source.getUserId,
      getGameId: source.getGameId
    })
  }))
}

/**
 * A stored feed as the wire shows it. Its options get the defaults of options added since it was
 * written. The cast: `FeedModules[M].feed` is this shape for module M (display_info on the lookup
 * modules only, game_names on streaming only); TypeScript cannot follow `r.module` to `M`.
 */
const toFeed = <M extends FeedModuleName>(r: FeedRecord<M>): Feed<M> => {
  const base = {
    id: r.id,
    feed_identifier: r.feedIdentifier,
    webhook_options: withDefaults(r.module, r.webhookOptions),
    webhook_info: { name: r.webhook.name, avatar: r.webhook.avatar, channel_id: r.webhook.channelId }
  }
  if (!isLookupModule(r.module) || r.displayInfo === null) return base as Feed<M>
  const d = r.displayInfo
  const display_info: DisplayInfo = r.module === "streaming"
    ? { user_name: d.user_name, display_name: d.display_name, user_url: d.user_url, game_names: d.game_names ?? null }
    : { user_name: d.user_name, display_name: d.display_name, user_url: d.user_url }
  return { ...base, display_info } as Feed<M>
}
