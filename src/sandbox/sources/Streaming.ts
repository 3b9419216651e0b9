/**
 * Twitch twin: `POST /sandbox/streaming/oauth2/token` (client credentials) and Helix
 * `GET /sandbox/streaming/helix/users|games`. Helix requires a Client-Id header and a bearer token
 * (any non-empty value here), answers 401 without them and 400 for malformed ids.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, formOrQuery, header, json, query } from "./Http.ts"
import { GAMES, STREAMING_USERS } from "./Seed.ts"

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
    profile_image_url: "",
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

export const StreamingTwin = [
  sandboxRoute("POST", "/sandbox/streaming/oauth2/token", token),
  sandboxRoute("GET", "/sandbox/streaming/helix/users", users),
  sandboxRoute("GET", "/sandbox/streaming/helix/games", games)
] as const
