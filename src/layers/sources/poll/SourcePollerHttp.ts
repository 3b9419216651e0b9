/**
 * The live SourcePoller: one connector per module over one fetcher (Fetch.ts: User-Agent with the
 * operator's contact, conditional requests, time-out, body cap, redirects by hand, politeness per
 * host). A platform connector exists when its credentials do (the same options as the lookup
 * clients, so sandbox mode points both at the twins); without them a poll fails `not-configured`
 * naming the variables to set. rss needs none. `pollMany` batches streaming (100 channels a Helix
 * call) and polls the other modules a few at a time.
 */
import { Cause, Config, Duration, Effect, Layer, Option } from "effect"
import type { HttpClient } from "effect/http"
import type { FeedModuleName } from "../../../domain/platform/Platform.ts"
import { type PollFailed, type PollResult, type PollState, SourcePoller } from "../../../services/sources/SourcePoller.ts"
import { redactText } from "../../../services/infra/Redact.ts"
import { ExternalSourcesHttp, type ExternalSourcesOptions, SOURCE_ENV } from "../ExternalSourcesHttp.ts"
import { makePublicOnlyClient } from "../PublicOnlyClient.ts"
import { failed, makeFetcher } from "./Fetch.ts"
import { type ForumPollOptions, makeForumPoller } from "./ForumPoller.ts"
import { makeMicroblogPoller, type MicroblogPollOptions } from "./MicroblogPoller.ts"
import { makePhotoPoller, type PhotoPollOptions } from "./PhotoPoller.ts"
import { makeRssPoller, type RssPollOptions } from "./RssPoller.ts"
import { makeStreamingPoller, type StreamingPollOptions } from "./StreamingPoller.ts"
import { makeVideoPoller, type VideoPollOptions } from "./VideoPoller.ts"
import { USER_AGENT_PRODUCT } from "../../../domain/infra/Version.ts"

export type { ForumPollOptions, MicroblogPollOptions, PhotoPollOptions, RssPollOptions, StreamingPollOptions, VideoPollOptions }

export interface SourcePollerHttpOptions {
  /** FEED_USER_AGENT: the whole User-Agent. Default `bot-module-gateway/<version> (+<contact>)`. */
  readonly userAgent?: string | undefined
  /** FEED_CONTACT: how a feed's host reaches the operator (a URL or an e-mail), put in the default User-Agent. */
  readonly contact?: string | undefined
  /** FEED_FETCH_TIMEOUT_MS: per request, from the host's turn until the body is read. Default 15 s. */
  readonly timeout?: Duration.Input | undefined
  /** FEED_MAX_BODY_BYTES: larger answers are cut off unread (`too-large`). Default 5 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** FEED_HOST_CONCURRENCY: requests in flight per feed host. Default 2. */
  readonly hostConcurrency?: number | undefined
  /** Requests in flight per platform API host (Twitch, YouTube…), unless a module says otherwise. Default 8. */
  readonly apiConcurrency?: number | undefined
  /** Redirects followed per request. Default 5. */
  readonly maxRedirects?: number | undefined
  /** FEED_OFFLINE_GRACE_SECONDS (streaming). Default 300. */
  readonly offlineGraceSeconds?: number | undefined
  /** Sources `pollMany` polls at once for modules that cannot batch. Default 4. */
  readonly concurrency?: number | undefined
  readonly rss?: RssPollOptions | undefined
  readonly forum?: ForumPollOptions | undefined
  readonly streaming?: StreamingPollOptions | undefined
  readonly video?: VideoPollOptions | undefined
  readonly microblog?: MicroblogPollOptions | undefined
  readonly photo?: PhotoPollOptions | undefined
}

export const DEFAULT_USER_AGENT_PRODUCT = USER_AGENT_PRODUCT

/** FEED_USER_AGENT as given, else `bot-module-gateway/<version> (+<contact>)`, else `… (feed reader)`. */
export const userAgentOf = (options: Pick<SourcePollerHttpOptions, "userAgent" | "contact">): string =>
  options.userAgent ?? `${DEFAULT_USER_AGENT_PRODUCT} (${options.contact === undefined ? "feed reader" : `+${options.contact}`})`

interface Connector {
  readonly poll: (identifier: string, previous: PollState) => Effect.Effect<PollResult, PollFailed>
  readonly pollMany?: (
    sources: ReadonlyArray<{ readonly identifier: string; readonly previous: PollState }>
  ) => Effect.Effect<ReadonlyMap<string, PollResult | PollFailed>>
}

const notConfigured = (module: keyof typeof SOURCE_ENV): Connector => {
  const error = failed("not-configured", `The ${module} source is not configured (set ${SOURCE_ENV[module].join(" and ")}).`)
  return { poll: () => Effect.fail(error) }
}

const make = (options: SourcePollerHttpOptions) =>
  Effect.gen(function*() {
    const userAgent = userAgentOf(options)
    const fetcher = yield* makeFetcher({
      userAgent,
      timeout: options.timeout ?? "15 seconds",
      maxBodyBytes: options.maxBodyBytes ?? 5 * 1024 * 1024,
      maxRedirects: options.maxRedirects ?? 5,
      hostConcurrency: options.hostConcurrency ?? 2,
      // User-given feed URLs connect to public addresses only, checked at connect time.
      guardedClient: options.rss?.allowPrivateAddresses === true ? undefined : yield* makePublicOnlyClient({ resolve: options.rss?.resolve })
    })
    const api = options.apiConcurrency ?? 8
    // Each platform's calls are counted under its name (services/infra/Metrics.ts); rss stays unlabelled (user URLs).
    const labelled = (platform: string): typeof fetcher => ({ fetch: (req) => fetcher.fetch({ platform, ...req }) })
    const connectors: Record<FeedModuleName, Connector> = {
      rss: makeRssPoller(fetcher, options.rss ?? {}),
      forum: options.forum === undefined
        ? notConfigured("forum")
        : yield* makeForumPoller(labelled("reddit"), { concurrency: api, ...options.forum }, userAgent),
      streaming: options.streaming === undefined
        ? notConfigured("streaming")
        : yield* makeStreamingPoller(labelled("twitch"), { concurrency: api, offlineGraceSeconds: options.offlineGraceSeconds, ...options.streaming }),
      video: options.video === undefined ? notConfigured("video") : makeVideoPoller(labelled("youtube"), { concurrency: api, ...options.video }),
      microblog: options.microblog === undefined ? notConfigured("microblog") : makeMicroblogPoller(labelled("x"), { concurrency: api, ...options.microblog }),
      photo: options.photo === undefined ? notConfigured("photo") : makePhotoPoller(labelled("instagram"), { concurrency: api, ...options.photo })
    }

    const pollMany: SourcePoller["Service"]["pollMany"] = (module, sources) => {
      const connector = connectors[module]
      if (connector.pollMany !== undefined) return connector.pollMany(sources)
      return Effect.forEach(sources, (s) => Effect.result(connector.poll(s.identifier, s.previous)), { concurrency: options.concurrency ?? 4 })
        .pipe(Effect.map((results) => {
          const out = new Map<string, PollResult | PollFailed>()
          results.forEach((r, i) => out.set(sources[i]!.identifier, r._tag === "Success" ? r.success : r.failure))
          return out
        }))
    }

    return SourcePoller.of({
      poll: (module, identifier, previous) =>
        connectors[module].poll(identifier, previous).pipe(
          // A defect in a connector (a bug, a platform answering beyond its schema) fails this poll only.
          Effect.catchDefect((defect) =>
            // The defect may quote the URL it failed on, whose path or query may hold a secret: redacted.
            Effect.logError("source connector defect", redactText(Cause.pretty(Cause.die(defect)))).pipe(
              Effect.andThen(Effect.fail(failed("unreadable", `The ${module} source answered something the gateway could not handle.`)))
            )
          ),
          Effect.annotateLogs({ module, identifier: redactText(identifier) })
        ),
      pollMany
    })
  })

/** The connectors' options from the lookup clients' (same credentials and base URLs; sandbox mode included). */
const fromExternalSources = (o: ExternalSourcesOptions): SourcePollerHttpOptions => ({
  ...(o.rss === undefined ? {} : { rss: { allowPrivateAddresses: o.rss.allowPrivateAddresses } }),
  ...(o.forum === undefined ? {} : { forum: o.forum }),
  ...(o.streaming === undefined ? {} : { streaming: o.streaming }),
  ...(o.video === undefined ? {} : { video: o.video }),
  ...(o.microblog === undefined ? {} : { microblog: o.microblog }),
  ...(o.photo === undefined ? {} : { photo: o.photo })
})

const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))

/**
 * Production options from the environment: the source credentials as ExternalSourcesHttp reads them,
 * and FEED_USER_AGENT, FEED_CONTACT, FEED_FETCH_TIMEOUT_MS, FEED_MAX_BODY_BYTES,
 * FEED_HOST_CONCURRENCY, FEED_OFFLINE_GRACE_SECONDS (each optional).
 */
const config: Config.Config<SourcePollerHttpOptions> = Config.all({
  sources: ExternalSourcesHttp.config(),
  userAgent: optional(Config.NonEmptyString("FEED_USER_AGENT")),
  contact: optional(Config.NonEmptyString("FEED_CONTACT")),
  timeoutMs: optional(Config.Int("FEED_FETCH_TIMEOUT_MS")),
  maxBodyBytes: optional(Config.Int("FEED_MAX_BODY_BYTES")),
  hostConcurrency: optional(Config.Int("FEED_HOST_CONCURRENCY")),
  offlineGraceSeconds: optional(Config.Int("FEED_OFFLINE_GRACE_SECONDS"))
}).pipe(Config.map((c): SourcePollerHttpOptions => ({
  ...fromExternalSources(c.sources),
  userAgent: c.userAgent,
  contact: c.contact,
  timeout: c.timeoutMs === undefined ? undefined : Duration.millis(c.timeoutMs),
  maxBodyBytes: c.maxBodyBytes,
  hostConcurrency: c.hostConcurrency,
  offlineGraceSeconds: c.offlineGraceSeconds
})))

export const SourcePollerHttp = {
  /** The service from plain options; needs an HttpClient (FetchHttpClient.layer). */
  layer: (options: SourcePollerHttpOptions): Layer.Layer<SourcePoller, never, HttpClient.HttpClient> =>
    Layer.effect(SourcePoller, make(options)),
  config,
  fromExternalSources,
  /** `layer(config)` read from the environment. */
  layerConfig: Layer.unwrap(Effect.gen(function*() {
    return Layer.effect(SourcePoller, make(yield* config))
  }))
}
