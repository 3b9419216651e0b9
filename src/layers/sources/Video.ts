/**
 * The video source: YouTube Data API v3 with an API key (sent as the `key` parameter, redacted in
 * traces). A channel id (`UC` + 22) is looked up by id, `@handle` by handle, anything else by title
 * search (unreliable, as the contract says: the exact title wins, else the first result).
 */
import { Effect, Redacted, Schema } from "effect"
import { NotFound } from "../../domain/infra/Errors.ts"
import type { ExternalUser } from "../../services/sources/ExternalSources.ts"
import { decode, type Failure, get, unavailable, send, type Upstream } from "./Upstream.ts"

export interface VideoOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** Default `https://www.googleapis.com/youtube/v3`. */
  readonly baseUrl?: string | undefined
}

const Channels = Schema.Struct({
  items: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.String,
    snippet: Schema.Struct({ title: Schema.String, customUrl: Schema.optionalKey(Schema.String) })
  })))
})
const Search = Schema.Struct({
  items: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.Struct({ channelId: Schema.optionalKey(Schema.String) }),
    snippet: Schema.Struct({ title: Schema.String })
  })))
})

const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/
const HANDLE = /^@[\p{L}\p{N}._-]{3,30}$/u

export const makeVideo = (u: Upstream, options: VideoOptions) => {
  const baseUrl = options.baseUrl ?? "https://www.googleapis.com/youtube/v3"

  const call = <S extends typeof Channels | typeof Search>(schema: S, path: string, params: Record<string, string>) =>
    send(u, get(baseUrl, path, { urlParams: { ...params, key: options.apiKey } })).pipe(
      Effect.flatMap((a) =>
        a.status === 200
          ? decode(u, schema)(a.body)
          // 400 keyInvalid, 403 quotaExceeded / accessNotConfigured: all the gateway's own problem.
          : Effect.fail(unavailable(u, `refused the request (${a.status})`))
      )
    )

  const notFound = (input: string) => NotFound.of(`No video channel "${input}".`)

  const channel = (params: Record<string, string>, input: string): Effect.Effect<ExternalUser, NotFound | Failure> =>
    call(Channels, "/channels", { part: "snippet", ...params }).pipe(
      Effect.flatMap(({ items }) => {
        const c = items?.[0]
        if (c === undefined) return Effect.fail(notFound(input))
        const alias = c.snippet.customUrl !== undefined && c.snippet.customUrl.length > 0 ? c.snippet.customUrl : undefined
        return Effect.succeed({
          id: c.id,
          userName: alias ?? c.id,
          displayName: c.snippet.title,
          url: alias?.startsWith("@") ? `https://www.youtube.com/${alias}` : `https://www.youtube.com/channel/${c.id}`
        })
      })
    )

  const lookupUser = (nameOrId: string): Effect.Effect<ExternalUser, NotFound | Failure> => {
    const input = nameOrId.trim()
    if (input.length === 0) return Effect.fail(notFound(nameOrId))
    if (CHANNEL_ID.test(input)) return channel({ id: input }, nameOrId)
    if (HANDLE.test(input)) return channel({ forHandle: input }, nameOrId)
    return call(Search, "/search", { part: "snippet", type: "channel", maxResults: "5", q: input }).pipe(
      Effect.flatMap(({ items }) => {
        const found = (items ?? []).filter((i) => i.id.channelId !== undefined)
        const best = found.find((i) => i.snippet.title.toLowerCase() === input.toLowerCase()) ?? found[0]
        return best?.id.channelId === undefined ? Effect.fail(notFound(nameOrId)) : channel({ id: best.id.channelId }, nameOrId)
      })
    )
  }

  return {
    lookupUser: (nameOrId: string) => lookupUser(nameOrId).pipe(Effect.withSpan("ExternalSources.video.lookupUser"))
  }
}
