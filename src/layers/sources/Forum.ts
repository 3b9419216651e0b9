/**
 * The forum source: Reddit through OAuth with an app-only token (client credentials, HTTP Basic
 * client id and secret at `POST /api/v1/access_token`), then `GET /r/{name}/about` and
 * `GET /r/{name}/api/link_flair_v2` on oauth.reddit.com. Chosen over the public `.json` pages
 * because Reddit throttles or blocks unauthenticated server traffic and the flair list needs OAuth.
 * A private, quarantined or banned subreddit counts as not found (no feed can read it); a flair list
 * Reddit will not show to an app (403/404) is an empty list.
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { NotFound } from "../../domain/infra/Errors.ts"
import type { ForumInfo } from "../../services/sources/ExternalSources.ts"
import { makeAppToken, readAppToken } from "./AppToken.ts"
import { decode, type Failure, get, join, refuseUnauthorized, send, sendRaw, unavailable, type Upstream } from "./Upstream.ts"
import { USER_AGENT_PRODUCT } from "../../domain/infra/Version.ts"

export interface ForumOptions {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Default `https://oauth.reddit.com`. */
  readonly apiUrl?: string | undefined
  /** Default `https://www.reddit.com` (path `/api/v1/access_token`). */
  readonly authUrl?: string | undefined
  /** Reddit asks every client for a descriptive User-Agent. */
  readonly userAgent?: string | undefined
}

const About = Schema.Struct({
  kind: Schema.String,
  data: Schema.optionalKey(Schema.Struct({ display_name: Schema.optionalKey(Schema.String) }))
})
const Flairs = Schema.Array(Schema.Struct({ text: Schema.optionalKey(Schema.NullOr(Schema.String)) }))

const SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/

export const makeForum = (u: Upstream, options: ForumOptions) =>
  Effect.gen(function*() {
    const apiUrl = options.apiUrl ?? "https://oauth.reddit.com"
    const authUrl = options.authUrl ?? "https://www.reddit.com"
    const userAgent = options.userAgent ?? `${USER_AGENT_PRODUCT} (feed connector)`

    const token = yield* makeAppToken(
      send(
        u,
        HttpClientRequest.post(join(authUrl, "/api/v1/access_token"), { acceptJson: true, headers: { "user-agent": userAgent } }).pipe(
          HttpClientRequest.basicAuth(options.clientId, options.clientSecret),
          HttpClientRequest.bodyUrlParams({ grant_type: "client_credentials" })
        )
      ).pipe(Effect.flatMap((a) => readAppToken(u, a)))
    )

    const call = (path: string) =>
      token.withToken((accessToken) =>
        sendRaw(u, get(apiUrl, path, { urlParams: { raw_json: "1" }, headers: { "user-agent": userAgent } }).pipe(
          HttpClientRequest.bearerToken(accessToken)
        ))
      ).pipe(Effect.flatMap(refuseUnauthorized(u)))

    const forum = (input: string): Effect.Effect<ForumInfo, NotFound | Failure> => {
      const name = input.trim().replace(/^\/?r\//i, "").replace(/\/+$/, "")
      const notFound = NotFound.of(`No forum "${input}".`)
      if (!SUBREDDIT.test(name)) return Effect.fail(notFound)
      return Effect.gen(function*() {
        const about = yield* call(`/r/${name}/about`)
        if (about.status === 403 || about.status === 404) return yield* Effect.fail(notFound)
        if (about.status !== 200) return yield* Effect.fail(unavailable(u, `refused the request (${about.status})`))
        // An unknown name may be redirected to a search listing rather than a 404.
        const body = yield* decode(u, About)(about.body)
        const canonical = body.kind === "t5" ? body.data?.display_name : undefined
        if (canonical === undefined) return yield* Effect.fail(notFound)

        const flairs = yield* call(`/r/${canonical}/api/link_flair_v2`)
        if (flairs.status === 403 || flairs.status === 404) return { name: canonical, flairs: [] }
        if (flairs.status !== 200) return yield* Effect.fail(unavailable(u, `refused the request (${flairs.status})`))
        const list = yield* decode(u, Flairs)(flairs.body)
        const texts = list.flatMap((f) => typeof f.text === "string" && f.text.length > 0 ? [f.text] : [])
        return { name: canonical, flairs: [...new Set(texts)] }
      }).pipe(Effect.withSpan("ExternalSources.forum"))
    }

    return { forum }
  })
