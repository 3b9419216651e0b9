/**
 * The external sources of the feed connectors (streaming, video, microblog, photo, forum, RSS):
 * one live client per source, each configured by its own credentials (layers/ExternalSourcesHttp.ts),
 * each with a sandbox twin (src/sandbox/sources). A source without credentials answers 503 naming it.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { BadRequest, NotFound, RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { LookupModule } from "../../domain/feeds/Feed.ts"

/** A user or channel of a source, by its external id. */
export interface ExternalUser {
  readonly id: string
  /** For video: the channel's custom URL alias if set, else the channel id. */
  readonly userName: string
  readonly displayName: string
  readonly url: string
}

export interface ExternalGame {
  readonly id: string
  readonly name: string
}

export interface ForumInfo {
  /** The canonical subreddit name. */
  readonly name: string
  readonly flairs: ReadonlyArray<string>
}

export interface RssInfo {
  /** The URL, normalised. */
  readonly url: string
  readonly title: string
}

export type SourceError = NotFound | RequestTimeout | ServiceUnavailable

export class ExternalSources extends Context.Service<ExternalSources, {
  /** A user name or id (photo, streaming, microblog), a channel id, handle or title (video). */
  readonly lookupUser: (module: LookupModule, nameOrId: string) => Effect.Effect<ExternalUser, SourceError>
  /** A user by its external id, to refresh display info. */
  readonly lookupGame: (nameOrId: string) => Effect.Effect<ExternalGame, SourceError>
  /** Names of games by id, in the given order (unknown ids are left out). */
  readonly gameNames: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, SourceError>
  /** A subreddit (name with or without `r/`) and its flairs. */
  readonly forum: (name: string) => Effect.Effect<ForumInfo, SourceError>
  /** Fetches the URL and parses it as RSS or Atom; a URL that is not a feed → BadRequest. */
  readonly rss: (url: string) => Effect.Effect<RssInfo, SourceError | BadRequest>
}>()("gateway/ExternalSources") {}
