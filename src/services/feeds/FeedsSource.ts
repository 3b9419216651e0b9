/**
 * A feed's side of its external source: the identifier resolved to the source's own (a user's id,
 * a forum's name, a feed's URL) with what the answer displays of it, the options that name things of
 * the source checked against it (`filter_game` names → ids, `filter_flair` → the forum's spelling),
 * and the user and game lookups of the API.
 */
import { Effect, Option, Result } from "effect"
import type { Problem } from "../../domain/infra/Errors.ts"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { NotFound } from "../../domain/infra/Errors.ts"
import { isLookupModule, withDefaults } from "../../domain/feeds/Feed.ts"
import type { DisplayInfo, GameLookup, LookupModule, UserLookup, WebhookOptions, WebhookOptionsInput } from "../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { SourceError } from "../sources/ExternalSources.ts"
import { ExternalSources } from "../sources/ExternalSources.ts"
import type { FeedsError } from "./FeedsProblems.ts"
import { bad } from "./FeedsProblems.ts"

export interface ResolvedIdentifier {
  readonly identifier: string
  readonly displayInfo: DisplayInfo | null
  /** forum: the subreddit's flairs (empty when it lists none or the list is not readable). */
  readonly flairs: ReadonlyArray<string>
}

/** A forum's flairs, to check `filter_flair` against. */
export interface Forum {
  readonly name: string
  readonly flairs: ReadonlyArray<string>
}

export interface ResolvedOptions<M extends FeedModuleName> {
  readonly options: WebhookOptions<M>
  /** streaming: names of the `filter_game` ids, in order; null when there is no game filter. */
  readonly gameNames: ReadonlyArray<string> | null
}

/**
 * The options this file rewrites, as the modules that have them type them: every module's options
 * fit this view (the index signature lets one without them in too).
 */
type SourceNamed = {
  readonly [option: string]: unknown
  readonly filter_game?: ReadonlyArray<string> | null
  readonly filter_flair?: ReadonlyArray<string> | null
}

export interface FeedsSource {
  readonly identifier: (module: FeedModuleName, raw: string) => Effect.Effect<ResolvedIdentifier, FeedsError>
  /** `input` with its defaults, games and flairs resolved (flairs when `forum` lists some). */
  readonly options: <M extends FeedModuleName>(
    module: M,
    input: WebhookOptionsInput<M> | undefined,
    forum: Option.Option<Forum>
  ) => Effect.Effect<ResolvedOptions<M>, FeedsError>
  /** The same for an update of the feed `identifier` (its forum is read when `filter_flair` is set). */
  readonly optionsOf: <M extends FeedModuleName>(
    module: M,
    identifier: string,
    input: WebhookOptionsInput<M>
  ) => Effect.Effect<ResolvedOptions<M>, FeedsError>
  readonly getUserId: (module: LookupModule, name: string) => Effect.Effect<UserLookup, SourceError>
  readonly getGameId: (name: string) => Effect.Effect<GameLookup, SourceError>
}

const notFoundAsBad = (message: string) => (e: NotFound): BadRequest =>
  bad("feed_identifier", `${message} (${e.problems[0]?.message ?? "not found"})`)

/** Decision: flairs are checked when the forum lists some (case-insensitively, stored in its spelling). */
const checkFlairs = (values: ReadonlyArray<string>, forum: Forum) => {
  if (forum.flairs.length === 0) return Effect.succeed(values)
  const problems: Array<Problem> = []
  const out: Array<string> = []
  for (const [i, v] of values.entries()) {
    const match = forum.flairs.find((f) => f.trim().toLowerCase() === v.trim().toLowerCase())
    if (match === undefined) {
      problems.push({
        message: `webhook_options.filter_flair: "${v}" is not a flair of ${forum.name} (its flairs: ${forum.flairs.slice(0, 25).join(", ")})`,
        additionalProperties: { path: `webhook_options.filter_flair[${i}]` }
      })
    } else if (!out.includes(match)) out.push(match)
  }
  return problems.length > 0 ? Effect.fail(BadRequest.many(problems)) : Effect.succeed(out)
}

export const FeedsSource = {
  /** Needs ExternalSources. */
  make: Effect.gen(function*() {
    const sources = yield* ExternalSources

    const identifier: FeedsSource["identifier"] = (module, raw) => {
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

    // A list option with a repeated element never gets here: the request's schema refuses it
    // (domain/feeds/Feed.ts), with the body's other problems, in one 400.
    const options: FeedsSource["options"] = (module, input, forum) =>
      Effect.gen(function*() {
        const options = withDefaults(module, input)
        const named: SourceNamed = options
        if (module === "streaming" && named.filter_game != null) {
          const games = yield* resolveGames(named.filter_game)
          return { options: { ...options, filter_game: games.map((g) => g.id) }, gameNames: games.map((g) => g.name) }
        }
        if (module === "forum" && named.filter_flair != null && Option.isSome(forum)) {
          return { options: { ...options, filter_flair: yield* checkFlairs(named.filter_flair, forum.value) }, gameNames: null }
        }
        return { options, gameNames: null }
      })

    const optionsOf: FeedsSource["optionsOf"] = (module, identifier, input) =>
      Effect.gen(function*() {
        const named: SourceNamed = input
        const forum = module === "forum" && named.filter_flair != null
          ? yield* sources.forum(identifier).pipe(
            Effect.map(Option.some<Forum>),
            // A forum that went away cannot be checked against: the flairs are kept as given.
            Effect.catchTag("NotFound", () => Effect.succeed(Option.none<Forum>()))
          )
          : Option.none<Forum>()
        return yield* options(module, input, forum)
      })

    return {
      identifier,
      options,
      optionsOf,
      getUserId: (module, name) =>
        sources.lookupUser(module, name.trim()).pipe(
          Effect.map((u) => ({ userId: u.id, userName: u.userName, displayName: u.displayName }))
        ),
      getGameId: (name) => sources.lookupGame(name.trim()).pipe(Effect.map((g) => ({ gameId: g.id, gameName: g.name })))
    } satisfies FeedsSource
  })
}
