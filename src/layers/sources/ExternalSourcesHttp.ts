/**
 * The live ExternalSources: one client per source (src/layers/sources), each present only when its
 * credentials are; a source without them answers 503 naming it and the variables to set. Each
 * client's base URL is an option: in sandbox mode src/sandbox/SandboxMode.ts points them all at the
 * sandbox twins with placeholder credentials, so the same code runs against them.
 */
import { Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import { HttpClient } from "effect/http"
import type { LookupModule } from "../../domain/feeds/Feed.ts"
import { ExternalSources } from "../../services/sources/ExternalSources.ts"
import { type ForumOptions, makeForum } from "./Forum.ts"
import { makeMicroblog, type MicroblogOptions } from "./Microblog.ts"
import { makePhoto, type PhotoOptions } from "./Photo.ts"
import { makePublicOnlyClient } from "./PublicOnlyClient.ts"
import { makeRss, type RssOptions } from "./Rss.ts"
import { makeStreaming, type StreamingOptions } from "./Streaming.ts"
import { DEFAULT_TIMEOUT, notConfigured, type Upstream } from "./Upstream.ts"
import { makeVideo, type VideoOptions } from "./Video.ts"

export type { ForumOptions, MicroblogOptions, PhotoOptions, RssOptions, StreamingOptions, VideoOptions }

export interface ExternalSourcesOptions {
  /** Per upstream call (the RSS fetch: the whole download). Default 10 s. */
  readonly timeout?: Duration.Input | undefined
  /** Each source is configured when present; absent → 503 "not configured". */
  readonly streaming?: StreamingOptions | undefined
  readonly video?: VideoOptions | undefined
  readonly microblog?: MicroblogOptions | undefined
  readonly photo?: PhotoOptions | undefined
  readonly forum?: ForumOptions | undefined
  /** RSS needs no credentials: always on. */
  readonly rss?: RssOptions | undefined
}

/** The variables each source reads in `config`. */
export const SOURCE_ENV = {
  streaming: ["TWITCH_CLIENT_ID", "TWITCH_CLIENT_SECRET"],
  video: ["YOUTUBE_API_KEY"],
  microblog: ["X_BEARER_TOKEN"],
  photo: ["INSTAGRAM_ACCESS_TOKEN", "INSTAGRAM_USER_ID"],
  forum: ["REDDIT_CLIENT_ID", "REDDIT_CLIENT_SECRET"]
} as const

const services = {
  streaming: "Twitch",
  video: "YouTube",
  microblog: "X",
  photo: "Instagram",
  forum: "Reddit",
  rss: "feed host"
} as const

const missing = (source: keyof typeof SOURCE_ENV) => Effect.fail(notConfigured(source, SOURCE_ENV[source].join(" and ")))

const make = (options: ExternalSourcesOptions) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const timeout = options.timeout ?? DEFAULT_TIMEOUT
    const upstream = (source: keyof typeof services): Upstream => ({ client, source, service: services[source], timeout })

    const streaming = options.streaming === undefined ? undefined : yield* makeStreaming(upstream("streaming"), options.streaming)
    const video = options.video === undefined ? undefined : makeVideo(upstream("video"), options.video)
    const microblog = options.microblog === undefined ? undefined : makeMicroblog(upstream("microblog"), options.microblog)
    const photo = options.photo === undefined ? undefined : makePhoto(upstream("photo"), options.photo)
    const forum = options.forum === undefined ? undefined : yield* makeForum(upstream("forum"), options.forum)
    // User-given URLs: connections only to public addresses, checked at connect time (PublicOnlyClient.ts).
    const rssOptions = options.rss ?? {}
    const rss = makeRss(
      rssOptions.allowPrivateAddresses === true
        ? upstream("rss")
        : { ...upstream("rss"), client: yield* makePublicOnlyClient({ resolve: rssOptions.resolve }) },
      rssOptions
    )

    const lookupUser = (module: LookupModule, nameOrId: string) => {
      switch (module) {
        case "streaming":
          return streaming === undefined ? missing("streaming") : streaming.lookupUser(nameOrId)
        case "video":
          return video === undefined ? missing("video") : video.lookupUser(nameOrId)
        case "microblog":
          return microblog === undefined ? missing("microblog") : microblog.lookupUser(nameOrId)
        case "photo":
          return photo === undefined ? missing("photo") : photo.lookupUser(nameOrId)
      }
    }

    return ExternalSources.of({
      lookupUser,
      lookupGame: (nameOrId) => streaming === undefined ? missing("streaming") : streaming.lookupGame(nameOrId),
      gameNames: (ids) =>
        ids.length === 0 ? Effect.succeed([]) : streaming === undefined ? missing("streaming") : streaming.gameNames(ids),
      forum: (name) => forum === undefined ? missing("forum") : forum.forum(name),
      rss: rss.rss
    })
  })

const optional = (name: string) => Config.option(Config.NonEmptyString(name)).pipe(Config.map(Option.getOrUndefined))
const secret = (name: string) => Config.option(Config.Redacted(name)).pipe(
  Config.map((o) => Option.isSome(o) && Redacted.value(o.value).length > 0 ? o.value : undefined)
)

/**
 * The options from the environment (production): TWITCH_CLIENT_ID + TWITCH_CLIENT_SECRET,
 * YOUTUBE_API_KEY, X_BEARER_TOKEN, INSTAGRAM_ACCESS_TOKEN + INSTAGRAM_USER_ID,
 * REDDIT_CLIENT_ID + REDDIT_CLIENT_SECRET (+ optional REDDIT_USER_AGENT). A source whose variables
 * are not all set stays unconfigured. The timeout is the caller's (AppConfig.upstreamTimeoutMs).
 */
const config = (timeout: Duration.Input = DEFAULT_TIMEOUT): Config.Config<ExternalSourcesOptions> =>
  Config.all({
    twitchId: optional("TWITCH_CLIENT_ID"),
    twitchSecret: secret("TWITCH_CLIENT_SECRET"),
    youtubeKey: secret("YOUTUBE_API_KEY"),
    xToken: secret("X_BEARER_TOKEN"),
    igToken: secret("INSTAGRAM_ACCESS_TOKEN"),
    igUser: optional("INSTAGRAM_USER_ID"),
    redditId: optional("REDDIT_CLIENT_ID"),
    redditSecret: secret("REDDIT_CLIENT_SECRET"),
    redditAgent: optional("REDDIT_USER_AGENT")
  }).pipe(Config.map((c): ExternalSourcesOptions => ({
    timeout,
    streaming: c.twitchId !== undefined && c.twitchSecret !== undefined
      ? { clientId: c.twitchId, clientSecret: c.twitchSecret }
      : undefined,
    video: c.youtubeKey !== undefined ? { apiKey: c.youtubeKey } : undefined,
    microblog: c.xToken !== undefined ? { bearerToken: c.xToken } : undefined,
    photo: c.igToken !== undefined && c.igUser !== undefined ? { accessToken: c.igToken, userId: c.igUser } : undefined,
    forum: c.redditId !== undefined && c.redditSecret !== undefined
      ? { clientId: c.redditId, clientSecret: c.redditSecret, userAgent: c.redditAgent }
      : undefined,
    rss: { allowPrivateAddresses: false }
  })))

export const ExternalSourcesHttp = {
  /** The service from a plain options object; needs an HttpClient (FetchHttpClient.layer). */
  layer: (options: ExternalSourcesOptions): Layer.Layer<ExternalSources, never, HttpClient.HttpClient> =>
    Layer.effect(ExternalSources, make(options)),
  config,
  /** `layer(config(timeout))` read from the environment. */
  layerConfig: (timeout?: Duration.Input) =>
    Layer.unwrap(Effect.gen(function*() {
      return Layer.effect(ExternalSources, make(yield* config(timeout)))
    }))
}
