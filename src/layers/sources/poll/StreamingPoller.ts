/**
 * The streaming connector: Twitch Helix `GET /helix/streams?user_id=…` for up to 100 channels a
 * call (app token as the lookup client), live/offline computed against the cursor:
 * - a live stream while the cursor knows none → `live` (id: the stream id), the stream's game,
 *   title, names and profile image (`/helix/users`, once per stream) kept in the cursor;
 * - offline while live → `offlineSince` noted, nothing posted; still offline after the grace →
 *   `offline` (id `<streamId>:offline`, eventAt the time it was first seen offline);
 * - live again within the grace (same stream id, or a new stream started before the grace ended)
 *   → the same stream: no second `live`, no `offline`.
 * Both events carry the game the stream started with; a game change during the stream changes
 * nothing. A channel's answer is NotModified when its cursor did not change.
 */
import { Clock, Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import type { StreamingItem } from "../../../services/delivery/render/Item.ts"
import { PollFailed, type PollResult, type PollState } from "../../../services/sources/SourcePoller.ts"
import type { StreamingOptions } from "../Streaming.ts"
import { join } from "../Upstream.ts"
import { credentialsRefused, decodeJson, makeTokenClient } from "./Api.ts"
import { failed, type Fetcher } from "./Fetch.ts"

const Str = Schema.optionalKey(Schema.NullOr(Schema.String))
const HelixStream = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  user_login: Schema.String,
  user_name: Str,
  game_id: Str,
  game_name: Str,
  type: Str,
  title: Str,
  started_at: Schema.String
})
export type HelixStream = typeof HelixStream.Type
const Streams = Schema.Struct({ data: Schema.Array(HelixStream) })
const Users = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.String, profile_image_url: Str }))
})
const Games = Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })) })

const Live = Schema.Struct({
  streamId: Schema.String,
  startedAt: Schema.String,
  gameId: Schema.NullOr(Schema.String),
  game: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  login: Schema.String,
  displayName: Schema.String,
  profileImage: Schema.NullOr(Schema.String)
})
type Live = typeof Live.Type
const Cursor = Schema.Struct({ live: Schema.NullOr(Live), offlineSince: Schema.NullOr(Schema.Number) })
export type StreamingCursor = typeof Cursor.Type
const readCursor = Schema.decodeUnknownOption(Cursor)

export interface StreamingPollOptions extends StreamingOptions {
  /** FEED_OFFLINE_GRACE_SECONDS: how long a channel must stay offline before `offline` (default 300). */
  readonly offlineGraceSeconds?: number | undefined
  /** Requests in flight to the API host. */
  readonly concurrency?: number | undefined
}

const USER_ID = /^\d{1,20}$/
const nonEmpty = (s: string | null | undefined) => (s === null || s === undefined || s.trim() === "" ? null : s)

const item = (live: Live, event: "live" | "offline", eventAt: Date): StreamingItem => ({
  module: "streaming",
  id: event === "live" ? live.streamId : `${live.streamId}:offline`,
  url: `https://www.twitch.tv/${live.login}`,
  publishedAt: new Date(live.startedAt),
  eventAt,
  event,
  displayName: live.displayName,
  username: live.login,
  game: live.game,
  gameId: live.gameId,
  status: live.title,
  channelUrl: `https://www.twitch.tv/${live.login}`,
  profileImage: live.profileImage
})

/** A stream as the cursor keeps it (the profile image is filled in by the caller). */
export const liveOf = (s: HelixStream, profileImage: string | null): Live => ({
  streamId: s.id,
  startedAt: new Date(s.started_at).toISOString(),
  gameId: nonEmpty(s.game_id),
  game: nonEmpty(s.game_name),
  title: nonEmpty(s.title),
  login: s.user_login,
  displayName: nonEmpty(s.user_name) ?? s.user_login,
  profileImage
})

/**
 * One channel's step: its cursor, what Helix shows now (a live stream or nothing), the time and the
 * grace → the next cursor and the events to post. Pure, so the table of flaps is tested directly.
 */
export const transition = (
  cursor: StreamingCursor | null,
  stream: Live | undefined,
  now: number,
  graceMs: number
): { readonly cursor: StreamingCursor; readonly items: ReadonlyArray<StreamingItem> } => {
  const items: Array<StreamingItem> = []
  let c: StreamingCursor = cursor ?? { live: null, offlineSince: null }
  if (c.live !== null && c.offlineSince !== null) {
    const since = c.offlineSince
    const cameBack = stream !== undefined &&
      (stream.streamId === c.live.streamId || Date.parse(stream.startedAt) - since < graceMs)
    if (cameBack) c = { live: c.live, offlineSince: null }
    else if (stream !== undefined || now - since >= graceMs) {
      items.push(item(c.live, "offline", new Date(since)))
      c = { live: null, offlineSince: null }
    }
  }
  if (stream !== undefined && c.live === null) {
    c = { live: stream, offlineSince: null }
    items.push(item(stream, "live", new Date(stream.startedAt)))
  } else if (stream === undefined && c.live !== null && c.offlineSince === null) {
    c = { live: c.live, offlineSince: now }
  }
  return { cursor: c, items }
}

export const makeStreamingPoller = (fetcher: Fetcher, options: StreamingPollOptions) =>
  Effect.gen(function*() {
    const apiUrl = options.apiUrl ?? "https://api.twitch.tv"
    const authUrl = options.authUrl ?? "https://id.twitch.tv"
    const graceMs = (options.offlineGraceSeconds ?? 300) * 1000
    const { authed } = yield* makeTokenClient(
      fetcher,
      "Twitch",
      HttpClientRequest.post(join(authUrl, "/oauth2/token"), { acceptJson: true }).pipe(
        HttpClientRequest.bodyUrlParams({ client_id: options.clientId, client_secret: options.clientSecret, grant_type: "client_credentials" })
      )
    )

    const helix = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, path: string, params: ReadonlyArray<readonly [string, string]>) =>
      authed((token) => ({
        request: HttpClientRequest.get(join(apiUrl, path), { acceptJson: true, urlParams: params, headers: { "client-id": options.clientId } })
          .pipe(HttpClientRequest.bearerToken(token)),
        name: "Twitch",
        concurrency: options.concurrency
      })).pipe(
        Effect.flatMap((f) =>
          f.status === 200
            ? decodeJson(schema, "Twitch")(f)
            : Effect.fail(f.status === 401 || f.status === 403 ? credentialsRefused("Twitch", f.status) : failed("http", `Twitch answered ${f.status}.`, { status: f.status }))
        )
      )

    /** Profile images and missing game names of new streams; a failure leaves them null. */
    const enrich = (streams: ReadonlyArray<HelixStream>) =>
      Effect.gen(function*() {
        if (streams.length === 0) return [] as ReadonlyArray<Live>
        const users = yield* helix(Users, "/helix/users", streams.map((s) => ["id", s.user_id] as const)).pipe(
          Effect.map((u) => new Map(u.data.map((d) => [d.id, nonEmpty(d.profile_image_url)]))),
          Effect.orElseSucceed(() => new Map<string, string | null>())
        )
        const unnamed = [...new Set(streams.filter((s) => nonEmpty(s.game_name) === null && nonEmpty(s.game_id) !== null).map((s) => s.game_id!))]
        const games = unnamed.length === 0 ? new Map<string, string>() : yield* helix(Games, "/helix/games", unnamed.map((id) => ["id", id] as const)).pipe(
          Effect.map((g) => new Map(g.data.map((d) => [d.id, d.name]))),
          Effect.orElseSucceed(() => new Map<string, string>())
        )
        return streams.map((s) => {
          const live = liveOf(s, users.get(s.user_id) ?? null)
          return live.game === null && live.gameId !== null ? { ...live, game: games.get(live.gameId) ?? null } : live
        })
      })

    /** Up to 100 channels in one Helix call. */
    const chunk = (sources: ReadonlyArray<{ readonly identifier: string; readonly previous: PollState }>) =>
      Effect.gen(function*() {
        const answer = yield* helix(Streams, "/helix/streams", [
          ...sources.map((s) => ["user_id", s.identifier.trim()] as const),
          ["first", "100"] as const
        ])
        const now = yield* Clock.currentTimeMillis
        const byUser = new Map(answer.data.filter((s) => (s.type ?? "live") === "live").map((s) => [s.user_id, s]))
        const cursors = sources.map((s) => {
          const prior = readCursor(s.previous.cursor)
          return prior._tag === "Some" ? prior.value : null
        })
        // Only streams the cursor does not know yet need a profile image (and maybe a game name).
        const fresh = sources.flatMap((s, i) => {
          const stream = byUser.get(s.identifier.trim())
          return stream !== undefined && cursors[i]?.live?.streamId !== stream.id ? [stream] : []
        })
        const enriched = new Map((yield* enrich(fresh)).map((l) => [l.streamId, l]))
        const results = new Map<string, PollResult | PollFailed>()
        sources.forEach((s, i) => {
          const stream = byUser.get(s.identifier.trim())
          const live = stream === undefined
            ? undefined
            : enriched.get(stream.id) ?? liveOf(stream, cursors[i]?.live?.profileImage ?? null)
          const next = transition(cursors[i] ?? null, live, now, graceMs)
          const state: PollState = { etag: null, lastModified: null, bodyHash: null, cursor: next.cursor }
          const unchanged = s.previous.cursor !== null && next.items.length === 0 &&
            JSON.stringify(next.cursor) === JSON.stringify(cursors[i])
          results.set(s.identifier, unchanged ? { _tag: "NotModified", state } : { _tag: "Items", items: next.items, state })
        })
        return results
      })

    const pollMany = (sources: ReadonlyArray<{ readonly identifier: string; readonly previous: PollState }>) =>
      Effect.gen(function*() {
        const results = new Map<string, PollResult | PollFailed>()
        const valid = sources.filter((s) => {
          if (USER_ID.test(s.identifier.trim())) return true
          results.set(s.identifier, failed("gone", `"${s.identifier}" is not a Twitch user id.`))
          return false
        })
        const chunks: Array<typeof valid> = []
        for (let i = 0; i < valid.length; i += 100) chunks.push(valid.slice(i, i + 100))
        const answers = yield* Effect.forEach(chunks, (c) => Effect.result(chunk(c)), { concurrency: 2 })
        answers.forEach((answer, i) => {
          if (answer._tag === "Success") for (const [k, v] of answer.success) results.set(k, v)
          else for (const s of chunks[i]!) results.set(s.identifier, answer.failure)
        })
        return results as ReadonlyMap<string, PollResult | PollFailed>
      }).pipe(Effect.withSpan("SourcePoller.streaming"))

    const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
      pollMany([{ identifier, previous }]).pipe(
        Effect.flatMap((m) => {
          const r = m.get(identifier)
          return r === undefined ? Effect.fail(failed("unreadable", "Twitch gave no answer.")) : r instanceof PollFailed ? Effect.fail(r) : Effect.succeed(r)
        })
      )

    return { poll, pollMany }
  })
