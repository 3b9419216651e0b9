/**
 * Twitch twin: `POST /sandbox/streaming/oauth2/token` (client credentials) and Helix
 * `GET /sandbox/streaming/helix/users|games|streams`. Helix requires a Client-Id header and a bearer
 * token (any non-empty value here), answers 401 without them and 400 for malformed ids. `streams`
 * lists the channels on air (a published `live` until its `offline`), up to 100 `user_id` /
 * `user_login` a call, like Helix.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, formOrQuery, header, json, query } from "./Http.ts"
import { GAMES, STREAMING_USERS, type StreamingUser } from "./Seed.ts"
import { SourceState } from "./Store.ts"

export const profileImageOf = (u: StreamingUser) =>
  `https://static-cdn.jtvnw.net/jtv_user_pictures/${u.login}-profile_image-300x300.png`

const unauthorized = (message: string) => json({ error: "Unauthorized", status: 401, message }, 401)
const badRequest = (message: string) => json({ error: "Bad Request", status: 400, message }, 400)

const authorized = Effect.gen(function*() {
  if ((yield* header("client-id")) === "") return unauthorized("Client ID is missing")
  if ((yield* bearer) === "") return unauthorized("OAuth token is missing")
  return undefined
})

const token = Effect.gen(function*() {
  const form = yield* formOrQuery
  if (form.get("grant_type") !== "client_credentials") return badRequest("unsupported grant type")
  if ((form.get("client_id") ?? "") === "") return badRequest("missing client id")
  if ((form.get("client_secret") ?? "") === "") return json({ status: 403, message: "invalid client secret" }, 403)
  return json({ access_token: "sandbox-twitch-app-token", expires_in: 5_000_000, token_type: "bearer" })
})

const users = Effect.gen(function*() {
  const denied = yield* authorized
  if (denied !== undefined) return denied
  const q = yield* query
  const ids = q.getAll("id")
  const logins = q.getAll("login").map((l) => l.toLowerCase())
  if (ids.length + logins.length > 100) return badRequest("The sum of the id and login parameters exceeds the maximum of 100")
  if (ids.some((id) => !/^\d+$/.test(id))) return badRequest("Invalid id")
  if (logins.some((l) => !/^\w{1,25}$/.test(l))) return badRequest("Invalid login names, emails or IDs in request")
  const data = STREAMING_USERS.filter((u) => ids.includes(u.id) || logins.includes(u.login)).map((u) => ({
    id: u.id,
    login: u.login,
    display_name: u.displayName,
    type: "",
    broadcaster_type: "partner",
    description: `${u.displayName} streams in the sandbox.`,
    profile_image_url: profileImageOf(u),
    offline_image_url: "",
    view_count: 0,
    created_at: "2020-01-01T00:00:00Z"
  }))
  return json({ data })
})

const games = Effect.gen(function*() {
  const denied = yield* authorized
  if (denied !== undefined) return denied
  const q = yield* query
  const ids = q.getAll("id")
  const names = q.getAll("name").map((n) => n.toLowerCase())
  if (ids.length + names.length > 100) return badRequest("The sum of the id and name parameters exceeds the maximum of 100")
  const data = GAMES.filter((g) => ids.includes(g.id) || names.includes(g.name.toLowerCase())).map((g) => ({
    id: g.id,
    name: g.name,
    box_art_url: `https://static-cdn.jtvnw.net/ttv-boxart/${g.id}-{width}x{height}.jpg`,
    igdb_id: ""
  }))
  return json({ data })
})

const streams = Effect.gen(function*() {
  const denied = yield* authorized
  if (denied !== undefined) return denied
  const store = yield* SourceState
  const q = yield* query
  const ids = q.getAll("user_id")
  const logins = q.getAll("user_login").map((l) => l.toLowerCase())
  if (ids.length > 100) return badRequest("The parameter \"user_id\" may only be specified up to 100 times")
  if (logins.length > 100) return badRequest("The parameter \"user_login\" may only be specified up to 100 times")
  if (ids.some((id) => !/^\d+$/.test(id))) return badRequest("Malformed query params.")
  const first = q.get("first") === null ? 20 : Number(q.get("first"))
  if (!Number.isInteger(first) || first < 1 || first > 100) {
    return badRequest("The parameter \"first\" was malformed: the value must be greater than or equal to 1 and less than or equal to 100")
  }
  const type = q.get("type") ?? "all"
  const gameIds = q.getAll("game_id")
  const wanted = ids.length + logins.length === 0
    ? STREAMING_USERS
    : STREAMING_USERS.filter((u) => ids.includes(u.id) || logins.includes(u.login))
  const data = wanted.flatMap((u) => {
    const s = store.streams.get(u.id)
    if (s === undefined || (type !== "all" && type !== "live") || (gameIds.length > 0 && !gameIds.includes(s.gameId))) return []
    return [{
      id: s.id,
      user_id: u.id,
      user_login: u.login,
      user_name: u.displayName,
      game_id: s.gameId,
      game_name: s.gameName,
      type: "live",
      title: s.title,
      tags: [],
      viewer_count: 0,
      started_at: new Date(s.startedAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
      language: "en",
      thumbnail_url: `https://static-cdn.jtvnw.net/previews-ttv/live_user_${u.login}-{width}x{height}.jpg`,
      tag_ids: [],
      is_mature: s.mature
    }]
  }).slice(0, first)
  return json({ data, pagination: {} })
})

export const StreamingTwin = [
  sandboxRoute("POST", "/sandbox/streaming/oauth2/token", token),
  sandboxRoute("GET", "/sandbox/streaming/helix/users", users),
  sandboxRoute("GET", "/sandbox/streaming/helix/games", games),
  sandboxRoute("GET", "/sandbox/streaming/helix/streams", streams)
] as const
