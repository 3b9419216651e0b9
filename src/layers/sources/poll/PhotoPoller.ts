/**
 * The photo connector: Instagram Graph business discovery through the gateway's own professional
 * account, `GET /{own id}?fields=business_discovery.username(<name>){…,media.limit(n){…}}`.
 * Business discovery takes a user name, while a feed stores the account's id: the name is read
 * from the id (`/{id}?fields=username`, which Graph answers for accounts the token may read) or
 * taken from the cursor (`{ username }`, kept from the last poll; the worker may seed it from the
 * feed's display_info). A found account whose id is not the stored one was renamed: `gone`.
 * Item id: the media id; url: its permalink; a video's cover image is its media URL.
 */
import { Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import type { PhotoItem } from "../../../services/delivery/render/Item.ts"
import type { PollFailed, PollResult, PollState } from "../../../services/sources/SourcePoller.ts"
import type { PhotoOptions } from "../Photo.ts"
import { join } from "../Upstream.ts"
import { decodeJson } from "./Api.ts"
import { failed, type Fetched, type Fetcher, json, unlessUnchanged, validators } from "./Fetch.ts"

const Str = Schema.optionalKey(Schema.NullOr(Schema.String))
const Media = Schema.Struct({
  id: Schema.String,
  caption: Str,
  media_type: Str,
  media_url: Str,
  thumbnail_url: Str,
  permalink: Schema.String,
  timestamp: Schema.String
})
const Account = Schema.Struct({
  id: Schema.String,
  username: Schema.String,
  name: Str,
  profile_picture_url: Str,
  media: Schema.optionalKey(Schema.Struct({ data: Schema.Array(Media) }))
})
const Discovery = Schema.Struct({ business_discovery: Schema.optionalKey(Account) })
const Node = Schema.Struct({ username: Schema.optionalKey(Schema.String) })
const Cursor = Schema.Struct({ username: Schema.String })
const readCursor = Schema.decodeUnknownOption(Cursor)

export interface PhotoPollOptions extends PhotoOptions {
  /** Media read per poll (default 20). */
  readonly maxResults?: number | undefined
  readonly concurrency?: number | undefined
}

interface Renamed {
  readonly _tag: "Renamed"
  readonly message: string
}
const USERNAME = /^[A-Za-z0-9._]{1,30}$/
const NUMERIC = /^\d{1,25}$/

/** `#word` tags of a caption, without `#`, each once. */
export const hashtags = (caption: string | null): ReadonlyArray<string> => [
  ...new Set([...(caption ?? "").matchAll(/#([\p{L}\p{N}_]+)/gu)].map((m) => m[1]!))
]

/** Graph's timestamps (`2024-05-01T10:00:00+0000`) as dates. */
const graphDate = (s: string) => new Date(s.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"))

export const photoItems = (account: typeof Account.Type): ReadonlyArray<PhotoItem> =>
  (account.media?.data ?? []).flatMap((m) => {
    const at = graphDate(m.timestamp)
    if (Number.isNaN(at.getTime())) return []
    const caption = m.caption === undefined || m.caption === null || m.caption.trim() === "" ? null : m.caption
    return [{
      module: "photo",
      id: m.id,
      url: m.permalink,
      publishedAt: at,
      eventAt: at,
      event: "post",
      username: account.username,
      fullname: account.name === undefined || account.name === null || account.name.trim() === "" ? null : account.name,
      caption,
      mediaUrl: (m.media_type === "VIDEO" ? m.thumbnail_url ?? m.media_url : m.media_url ?? m.thumbnail_url) ?? null,
      hashtags: hashtags(caption),
      profileUrl: `https://www.instagram.com/${account.username}/`,
      permalink: m.permalink,
      profilePicture: account.profile_picture_url ?? null
    } satisfies PhotoItem]
  })

/** Graph's error code in an answer, if any. */
const graphCode = (f: Fetched): number | undefined => {
  const code = (json(f) as { readonly error?: { readonly code?: unknown } } | undefined)?.error?.code
  return typeof code === "number" ? code : undefined
}

export const makePhotoPoller = (fetcher: Fetcher, options: PhotoPollOptions) => {
  const baseUrl = options.baseUrl ?? "https://graph.facebook.com/v21.0"
  const limit = Math.min(50, Math.max(1, options.maxResults ?? 20))

  const node = (id: string, fields: string, previous?: PollState) =>
    fetcher.fetch({
      request: HttpClientRequest.get(join(baseUrl, `/${encodeURIComponent(id)}`), {
        acceptJson: true,
        urlParams: { fields, access_token: options.accessToken }
      }),
      name: "Instagram",
      previous,
      concurrency: options.concurrency
    })

  const refused = (f: Fetched, name: string): PollFailed => {
    const code = graphCode(f)
    if (code === 190 || code === 102 || code === 104) {
      return failed("http", `Instagram refused the gateway's access token (code ${code}); the operator must renew it.`, { status: f.status })
    }
    if (code === 4 || code === 17 || code === 32 || code === 613) {
      return failed("http", `Instagram's rate limit for the gateway is reached (code ${code}); polling resumes later.`, { status: f.status, retryAfterSeconds: 3600 })
    }
    if (code === 110) return failed("gone", `${name} no longer exists or is no longer a professional account.`, { status: f.status })
    return failed("http", `Instagram answered ${f.status}${code === undefined ? "" : ` (code ${code})`} for ${name}.`, { status: f.status })
  }

  /** The user name business discovery needs. */
  const usernameOf = (identifier: string, previous: PollState): Effect.Effect<string, PollFailed> => {
    if (!NUMERIC.test(identifier)) return Effect.succeed(identifier.replace(/^@/, "").toLowerCase())
    const cursor = readCursor(previous.cursor)
    if (cursor._tag === "Some") return Effect.succeed(cursor.value.username)
    return node(identifier, "username").pipe(
      Effect.flatMap((f) => (f.status === 200 ? decodeJson(Node, "Instagram")(f) : Effect.fail(refused(f, `The Instagram account ${identifier}`)))),
      Effect.flatMap((n) =>
        n.username === undefined
          ? Effect.fail(failed("gone", `The user name of Instagram account ${identifier} cannot be read; recreate the feed with the account's name.`))
          : Effect.succeed(n.username)
      ),
      Effect.catchIf(
        (e) => e.kind === "http" && e.status === 400,
        () => Effect.fail(failed("gone", `The user name of Instagram account ${identifier} cannot be read; recreate the feed with the account's name.`))
      )
    )
  }

  const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
    pollOnce(identifier, previous).pipe(
      Effect.flatMap((r) =>
        r._tag !== "Renamed"
          ? Effect.succeed(r)
          // The name kept in the cursor may have moved to another account: read it from the id again.
          : previous.cursor !== null
          ? pollOnce(identifier, { ...previous, cursor: null, etag: null, lastModified: null })
          : Effect.succeed(r)
      ),
      Effect.flatMap((r) => r._tag === "Renamed" ? Effect.fail(failed("gone", r.message)) : Effect.succeed(r)),
      Effect.withSpan("SourcePoller.photo")
    )

  const pollOnce = (identifier: string, previous: PollState): Effect.Effect<PollResult | Renamed, PollFailed> =>
    Effect.gen(function*() {
      const id = identifier.trim()
      const username = yield* usernameOf(id, previous)
      const name = `The Instagram account @${username}`
      if (!USERNAME.test(username)) return yield* Effect.fail(failed("gone", `"${identifier}" is not an Instagram account.`))
      const fetched = yield* node(
        options.userId,
        `business_discovery.username(${username}){id,username,name,profile_picture_url,media.limit(${limit}){id,caption,media_type,media_url,thumbnail_url,permalink,timestamp}}`,
        previous
      )
      if (fetched.status !== 200 && fetched.status !== 304) return yield* Effect.fail(refused(fetched, name))
      return yield* unlessUnchanged(previous, fetched, (bodyHash) =>
        Effect.gen(function*() {
          const account = (yield* decodeJson(Discovery, "Instagram")(fetched)).business_discovery
          if (account === undefined) return yield* Effect.fail(failed("gone", `${name} is not a professional account the gateway can read.`))
          if (NUMERIC.test(id) && account.id !== id) {
            return { _tag: "Renamed", message: `${name} now belongs to another account; the followed account was renamed.` } as const
          }
          return {
            _tag: "Items",
            items: photoItems(account),
            state: { ...validators(fetched), bodyHash, cursor: { username: account.username } }
          } as const
        }))
    })

  return { poll }
}
