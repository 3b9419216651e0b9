/**
 * The forum connector: a subreddit's newest posts, `GET /r/{name}/new.json?limit=25&raw_json=1` on
 * oauth.reddit.com with the app-only token the lookup client uses (client credentials). Item id: the
 * post's fullname (`t3_…`); url: the permalink; `contentUrl` the link of a link post; `selfText` a
 * text post's Markdown (`selftext`, unescaped by `raw_json=1`). The
 * subreddit's icon (the default avatar) comes from `/r/{name}/about`, read once a day (cursor).
 * Private or quarantined (403) and banned or unknown (404, or a redirect to search) are `gone`.
 */
import { Clock, Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import type { ForumItem } from "../../../services/delivery/render/Item.ts"
import type { PollFailed, PollResult, PollState } from "../../../services/sources/SourcePoller.ts"
import type { ForumOptions } from "../Forum.ts"
import { join } from "../Upstream.ts"
import { credentialsRefused, decodeJson, makeTokenClient } from "./Api.ts"
import { failed, type Fetcher, json, unlessUnchanged, validators } from "./Fetch.ts"

const Str = Schema.optionalKey(Schema.NullOr(Schema.String))
const Post = Schema.Struct({
  id: Schema.String,
  name: Str,
  title: Schema.String,
  selftext: Str,
  author: Str,
  subreddit: Str,
  subreddit_id: Str,
  over_18: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  link_flair_text: Str,
  permalink: Schema.String,
  url: Str,
  created_utc: Schema.Number
})
const Listing = Schema.Struct({
  data: Schema.Struct({
    children: Schema.Array(Schema.Struct({ kind: Schema.String, data: Schema.Unknown }))
  })
})
const About = Schema.Struct({
  data: Schema.optionalKey(Schema.Struct({ community_icon: Str, icon_img: Str }))
})
const Cursor = Schema.Struct({ icon: Schema.NullOr(Schema.String), iconAt: Schema.Number })
type Cursor = typeof Cursor.Type
const readCursor = Schema.decodeUnknownOption(Cursor)
const readPost = Schema.decodeUnknownOption(Post)

const SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/
const ICON_REFRESH_MS = 24 * 3600 * 1000

export interface ForumPollOptions extends ForumOptions {
  /** Where permalinks point. Default `https://www.reddit.com`. */
  readonly siteUrl?: string | undefined
  /** Requests in flight to the API host. */
  readonly concurrency?: number | undefined
}

const nonEmpty = (s: string | null | undefined) => (s === null || s === undefined || s.trim() === "" ? null : s.trim())

const absolute = (href: string, base: string) => {
  try {
    return new URL(href, base).href
  } catch {
    return base
  }
}

/** The posts of a listing as ForumItems (only `t3` children; anything else is not a post). */
export const forumItems = (body: typeof Listing.Type, name: string, site: string, icon: string | null): ReadonlyArray<ForumItem> =>
  body.data.children.flatMap((child) => {
    if (child.kind !== "t3") return []
    const decoded = readPost(child.data)
    if (decoded._tag === "None") return []
    const p = decoded.value
    const permalink = absolute(p.permalink, site)
    const at = new Date(p.created_utc * 1000)
    return [{
      module: "forum",
      id: nonEmpty(p.name) ?? `t3_${p.id}`,
      url: permalink,
      publishedAt: at,
      eventAt: at,
      subreddit: nonEmpty(p.subreddit) ?? name,
      subredditFullname: nonEmpty(p.subreddit_id) ?? "",
      author: nonEmpty(p.author) ?? "[deleted]",
      title: p.title,
      flair: nonEmpty(p.link_flair_text),
      over18: p.over_18 === true,
      contentUrl: nonEmpty(p.url) === null ? permalink : absolute(p.url!.trim(), site),
      selfText: nonEmpty(p.selftext),
      permalink,
      subredditIcon: icon
    } satisfies ForumItem]
  })

export const makeForumPoller = (fetcher: Fetcher, options: ForumPollOptions, userAgent: string) =>
  Effect.gen(function*() {
    const apiUrl = options.apiUrl ?? "https://oauth.reddit.com"
    const authUrl = options.authUrl ?? "https://www.reddit.com"
    const site = options.siteUrl ?? "https://www.reddit.com"
    const agent = options.userAgent ?? userAgent
    const concurrency = options.concurrency
    const { authed } = yield* makeTokenClient(
      fetcher,
      "Reddit",
      HttpClientRequest.post(join(authUrl, "/api/v1/access_token"), { acceptJson: true, headers: { "user-agent": agent } }).pipe(
        HttpClientRequest.basicAuth(options.clientId, options.clientSecret),
        HttpClientRequest.bodyUrlParams({ grant_type: "client_credentials" })
      )
    )

    const get = (path: string, name: string, previous?: PollState) =>
      authed((token) => ({
        request: HttpClientRequest.get(join(apiUrl, path), {
          acceptJson: true,
          urlParams: path.endsWith("/new.json") ? { limit: "25", raw_json: "1" } : { raw_json: "1" },
          headers: { "user-agent": agent }
        }).pipe(HttpClientRequest.bearerToken(token)),
        name,
        previous,
        concurrency
      }))

    /** The icon from the cursor while fresh, else from `about` (a failure there keeps the old one). */
    const iconOf = (sub: string, cursor: Cursor | undefined, now: number): Effect.Effect<Cursor> =>
      cursor !== undefined && now - cursor.iconAt < ICON_REFRESH_MS
        ? Effect.succeed(cursor)
        : get(`/r/${sub}/about`, `The forum r/${sub}`).pipe(
          Effect.flatMap((f) => f.status === 200 ? decodeJson(About, "Reddit")(f) : Effect.succeed<typeof About.Type>({})),
          Effect.map((about): Cursor => ({
            icon: nonEmpty(about.data?.community_icon) ?? nonEmpty(about.data?.icon_img),
            iconAt: now
          })),
          Effect.orElseSucceed(() => ({ icon: cursor?.icon ?? null, iconAt: now }))
        )

    const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
      Effect.gen(function*() {
        const sub = identifier.trim().replace(/^\/?r\//i, "").replace(/\/+$/, "")
        const name = `The forum r/${sub}`
        if (!SUBREDDIT.test(sub)) return yield* Effect.fail(failed("gone", `"${identifier}" is not a subreddit name.`))
        const fetched = yield* get(`/r/${sub}/new.json`, name, previous)
        const s = fetched.status
        if (s === 401) return yield* Effect.fail(credentialsRefused("Reddit", s))
        if (s === 403) {
          const reason = (json(fetched) as { readonly reason?: unknown } | undefined)?.reason
          return yield* Effect.fail(failed("gone", `${name} is ${typeof reason === "string" ? reason : "private"}; the gateway cannot read it.`, { status: s }))
        }
        if (s === 404) return yield* Effect.fail(failed("gone", `${name} is banned or no longer exists.`, { status: s }))
        if (s !== 200 && s !== 304) return yield* Effect.fail(failed("http", `Reddit answered ${s} for ${name}.`, { status: s }))
        // Reddit sends an unknown name to a search page rather than a 404.
        if (s === 200 && !new URL(fetched.url).pathname.toLowerCase().includes(`/r/${sub.toLowerCase()}/`)) {
          return yield* Effect.fail(failed("gone", `${name} does not exist.`))
        }
        return yield* unlessUnchanged(previous, fetched, (bodyHash) =>
          Effect.gen(function*() {
            const listing = yield* decodeJson(Listing, "Reddit")(fetched)
            const prior = readCursor(previous.cursor)
            const cursor = yield* iconOf(sub, prior._tag === "Some" ? prior.value : undefined, yield* Clock.currentTimeMillis)
            return {
              _tag: "Items",
              items: forumItems(listing, sub, site, cursor.icon),
              state: { ...validators(fetched), bodyHash, cursor }
            } as const
          }))
      }).pipe(Effect.withSpan("SourcePoller.forum"))

    return { poll }
  })
