/**
 * The microblog connector: X API v2 user timeline with the app bearer token,
 * `GET /2/users/{id}/tweets?exclude=replies,retweets` with the author and media expansions (photos
 * by `url`, videos and GIFs by their preview image). Replies and reposts are never items; the
 * long-post text (`note_tweet`) wins over the truncated one; X escapes `&`, `<` and `>` in texts.
 * An unknown or suspended user is `gone`.
 */
import { Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import type { MicroblogItem } from "../../../services/delivery/render/Item.ts"
import type { PollFailed, PollResult, PollState } from "../../../services/sources/SourcePoller.ts"
import type { MicroblogOptions } from "../Microblog.ts"
import { join } from "../Upstream.ts"
import { credentialsRefused, decodeJson } from "./Api.ts"
import { failed, type Fetcher, unlessUnchanged, validators } from "./Fetch.ts"

const Str = Schema.optionalKey(Schema.NullOr(Schema.String))
const User = Schema.Struct({ id: Schema.String, username: Schema.String, name: Schema.String, profile_image_url: Str })
const Timeline = Schema.Struct({
  data: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.String,
    text: Schema.String,
    created_at: Schema.String,
    author_id: Str,
    note_tweet: Schema.optionalKey(Schema.Struct({ text: Schema.String })),
    attachments: Schema.optionalKey(Schema.Struct({ media_keys: Schema.optionalKey(Schema.Array(Schema.String)) }))
  }))),
  includes: Schema.optionalKey(Schema.Struct({
    users: Schema.optionalKey(Schema.Array(User)),
    media: Schema.optionalKey(Schema.Array(Schema.Struct({
      media_key: Schema.String,
      type: Str,
      url: Str,
      preview_image_url: Str
    })))
  })),
  errors: Schema.optionalKey(Schema.Array(Schema.Struct({ type: Str, title: Str, detail: Str })))
})
const UserAnswer = Schema.Struct({ data: Schema.optionalKey(User) })

export interface MicroblogPollOptions extends MicroblogOptions {
  /** Posts read per poll (5–100, default 20). */
  readonly maxResults?: number | undefined
  readonly concurrency?: number | undefined
}

const USER_ID = /^\d{1,20}$/

const unescapeX = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/** The timeline as items (posts whose author is not the user, e.g. in a pinned expansion, are dropped). */
export const microblogItems = (body: typeof Timeline.Type, user: typeof User.Type): ReadonlyArray<MicroblogItem> => {
  const media = new Map((body.includes?.media ?? []).map((m) => [m.media_key, m]))
  return (body.data ?? []).flatMap((t) => {
    if (t.author_id !== undefined && t.author_id !== null && t.author_id !== user.id) return []
    const at = new Date(t.created_at)
    if (Number.isNaN(at.getTime())) return []
    const mediaUrls = (t.attachments?.media_keys ?? []).flatMap((k) => {
      const m = media.get(k)
      const url = m === undefined ? null : m.type === "photo" ? m.url ?? null : m.preview_image_url ?? m.url ?? null
      return url === null || url === undefined ? [] : [url]
    })
    const postUrl = `https://x.com/${user.username}/status/${t.id}`
    return [{
      module: "microblog",
      id: t.id,
      url: postUrl,
      publishedAt: at,
      eventAt: at,
      screenName: user.username,
      name: user.name,
      text: unescapeX(t.note_tweet?.text ?? t.text),
      mediaUrls,
      postUrl,
      profileImage: user.profile_image_url ?? null
    } satisfies MicroblogItem]
  })
}

export const makeMicroblogPoller = (fetcher: Fetcher, options: MicroblogPollOptions) => {
  const baseUrl = options.baseUrl ?? "https://api.x.com"
  const maxResults = String(Math.min(100, Math.max(5, options.maxResults ?? 20)))

  const call = (path: string, params: Record<string, string>, previous?: PollState) =>
    fetcher.fetch({
      request: HttpClientRequest.get(join(baseUrl, path), { acceptJson: true, urlParams: params })
        .pipe(HttpClientRequest.bearerToken(options.bearerToken)),
      name: "X",
      previous,
      concurrency: options.concurrency
    })

  const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
    Effect.gen(function*() {
      const id = identifier.trim()
      const name = `The X user ${id}`
      if (!USER_ID.test(id)) return yield* Effect.fail(failed("gone", `"${identifier}" is not an X user id.`))
      const fetched = yield* call(`/2/users/${id}/tweets`, {
        exclude: "replies,retweets",
        max_results: maxResults,
        "tweet.fields": "created_at,author_id,attachments,note_tweet",
        expansions: "author_id,attachments.media_keys",
        "media.fields": "type,url,preview_image_url",
        "user.fields": "username,name,profile_image_url"
      }, previous)
      const s = fetched.status
      if (s === 401) return yield* Effect.fail(credentialsRefused("X", s))
      if (s === 404) return yield* Effect.fail(failed("gone", `${name} no longer exists.`, { status: s }))
      if (s === 403) return yield* Effect.fail(failed("http", `X refused to show ${name}'s posts (403): suspended, protected, or beyond the gateway's access level.`, { status: s }))
      if (s !== 200 && s !== 304) return yield* Effect.fail(failed("http", `X answered ${s} for ${name}.`, { status: s }))
      return yield* unlessUnchanged(previous, fetched, (bodyHash) =>
        Effect.gen(function*() {
          const body = yield* decodeJson(Timeline, "X")(fetched)
          // X answers an unknown or suspended user with 200 and only `errors`.
          if (body.data === undefined && (body.errors ?? []).some((e) => /not-found|Not Found|suspended/i.test(`${e.type ?? ""} ${e.title ?? ""} ${e.detail ?? ""}`))) {
            return yield* Effect.fail(failed("gone", `${name} no longer exists or is suspended.`))
          }
          const posts = body.data ?? []
          let user = body.includes?.users?.find((u) => u.id === id)
          if (user === undefined && posts.length > 0) {
            user = yield* call(`/2/users/${id}`, { "user.fields": "username,name,profile_image_url" }).pipe(
              Effect.flatMap((f) => f.status === 200 ? decodeJson(UserAnswer, "X")(f) : Effect.fail(failed("http", `X answered ${f.status} for ${name}.`, { status: f.status }))),
              Effect.flatMap((a) => a.data === undefined ? Effect.fail(failed("gone", `${name} no longer exists.`)) : Effect.succeed(a.data))
            )
          }
          return {
            _tag: "Items",
            items: user === undefined ? [] : microblogItems(body, user),
            state: { ...validators(fetched), bodyHash, cursor: null }
          } as const
        }))
    }).pipe(Effect.withSpan("SourcePoller.microblog"))

  return { poll }
}
