/**
 * Instagram Graph API twin: `GET /sandbox/photo/:nodeId?fields=...&access_token=`. Fields use
 * Graph's syntax (`a,b.limit(5){c,d}`). With `business_discovery.username(<name>){...}` it looks the
 * name up among professional accounts (any numeric node id stands for the gateway's own account),
 * including the account's `media` edge (the published posts, newest first: caption, media_type,
 * media_url, permalink, timestamp…); otherwise the node id itself must be a seeded IG user. Errors
 * carry Graph's codes: 2500 no token, 110 unknown user name, 100 unknown node or field.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, json, param, query } from "./Http.ts"
import { PHOTO_USERS, type PhotoUser } from "./Seed.ts"
import type { IgMedia } from "./Store.ts"
import { SourceState } from "./Store.ts"

const graphError = (code: number, message: string, extra: Record<string, unknown> = {}) =>
  json({ error: { message, type: "OAuthException", code, fbtrace_id: "sandbox", ...extra } }, 400)

/** One requested field: `media.limit(5){id,caption}` → name, modifiers, sub-fields. */
export interface GraphField {
  readonly name: string
  readonly modifiers: Readonly<Record<string, string>>
  readonly fields: ReadonlyArray<GraphField> | undefined
}

/** Parses Graph's `fields` syntax; undefined when malformed. */
export const parseFields = (input: string): ReadonlyArray<GraphField> | undefined => {
  let i = 0
  const name = () => {
    const m = /^[A-Za-z0-9_]+/.exec(input.slice(i))
    if (m === null) return undefined
    i += m[0].length
    return m[0]
  }
  const list = (): Array<GraphField> | undefined => {
    const out: Array<GraphField> = []
    for (;;) {
      const n = name()
      if (n === undefined) return undefined
      const modifiers: Record<string, string> = {}
      while (input[i] === ".") {
        i++
        const m = name()
        if (m === undefined || input[i] !== "(") return undefined
        const close = input.indexOf(")", i)
        if (close < 0) return undefined
        modifiers[m] = input.slice(i + 1, close)
        i = close + 1
      }
      let fields: Array<GraphField> | undefined
      if (input[i] === "{") {
        i++
        fields = list()
        if (fields === undefined || input[i] !== "}") return undefined
        i++
      }
      out.push({ name: n, modifiers, fields })
      if (input[i] !== ",") return out
      i++
    }
  }
  const parsed = list()
  return parsed !== undefined && i === input.length ? parsed : undefined
}

export const photoProfilePicture = (u: PhotoUser) => `https://scontent.cdninstagram.com/sandbox/${u.username}/profile.jpg`

/** Graph's timestamps: `2024-05-01T10:00:00+0000`. */
const graphTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+0000")

type Built = { readonly ok: Record<string, unknown> } | { readonly unknown: string; readonly on: string }

const mediaNode = (m: IgMedia, user: PhotoUser, fields: ReadonlyArray<GraphField>): Built => {
  const all: Record<string, unknown> = {
    id: m.id,
    ...(m.caption === null ? {} : { caption: m.caption }),
    media_type: m.media.length > 1 ? "CAROUSEL_ALBUM" : "IMAGE",
    media_product_type: "FEED",
    media_url: m.media[0],
    permalink: m.permalink,
    timestamp: graphTime(m.timestamp),
    username: user.username,
    like_count: 0,
    comments_count: 0
  }
  const known = new Set([...Object.keys(all), "caption", "thumbnail_url", "is_comment_enabled", "shortcode"])
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!known.has(f.name)) return { unknown: f.name, on: "IGMedia" }
    if (f.name in all) out[f.name] = all[f.name]
  }
  return { ok: out }
}

const userNode = (user: PhotoUser, media: ReadonlyArray<IgMedia>, fields: ReadonlyArray<GraphField>): Built => {
  const all: Record<string, unknown> = {
    id: user.id,
    username: user.username,
    ...(user.name === undefined ? {} : { name: user.name }),
    profile_picture_url: photoProfilePicture(user),
    biography: `${user.name ?? user.username} in the sandbox.`,
    followers_count: 1000,
    follows_count: 10,
    media_count: media.length,
    website: "https://example.com/sandbox"
  }
  const known = new Set([...Object.keys(all), "name", "media"])
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!known.has(f.name)) return { unknown: f.name, on: "IGUser" }
    if (f.name === "media") {
      const limit = Math.min(100, Math.max(1, Number(f.modifiers["limit"] ?? "25") || 25))
      const data: Array<Record<string, unknown>> = []
      for (const m of [...media].sort((a, b) => b.timestamp - a.timestamp).slice(0, limit)) {
        const built = mediaNode(m, user, f.fields ?? [{ name: "id", modifiers: {}, fields: undefined }])
        if ("unknown" in built) return built
        data.push(built.ok)
      }
      out["media"] = data.length === 0
        ? { data }
        : { data, paging: { cursors: { before: Buffer.from(String(data[0]!["id"])).toString("base64url"), after: Buffer.from(String(data.at(-1)!["id"])).toString("base64url") } } }
    } else if (f.name in all) out[f.name] = all[f.name]
  }
  return { ok: out }
}

const nonexisting = (b: { readonly unknown: string; readonly on: string }) =>
  graphError(100, `(#100) Tried accessing nonexisting field (${b.unknown}) on node type (${b.on})`)

const node = Effect.gen(function*() {
  const q = yield* query
  if ((q.get("access_token") ?? "") === "" && (yield* bearer) === "") {
    return graphError(2500, "An active access token must be used to query information about the current user.")
  }
  const store = yield* SourceState
  const nodeId = yield* param("nodeId")
  const fields = parseFields(q.get("fields") ?? "id")
  if (fields === undefined) return graphError(100, "Syntax error in the fields parameter.")
  const discovery = fields.find((f) => f.name === "business_discovery")
  if (discovery !== undefined) {
    if (!/^\d+$/.test(nodeId)) return graphError(100, "Unsupported get request.", { error_subcode: 33 })
    const name = (discovery.modifiers["username"] ?? "").toLowerCase()
    const user = PHOTO_USERS.find((u) => u.username === name)
    if (user === undefined) {
      return graphError(110, "Invalid user id", {
        error_subcode: 2207013,
        is_transient: false,
        error_user_title: "Cannot find User",
        error_user_msg: `The user with username: ${name} cannot be found.`
      })
    }
    const built = userNode(user, store.media.get(user.id) ?? [], discovery.fields ?? [{ name: "id", modifiers: {}, fields: undefined }])
    if ("unknown" in built) return nonexisting(built)
    return json({ business_discovery: built.ok, id: nodeId })
  }
  const user = PHOTO_USERS.find((u) => u.id === nodeId)
  if (user === undefined) {
    return graphError(
      100,
      `Unsupported get request. Object with ID '${nodeId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      { error_subcode: 33 }
    )
  }
  const built = userNode(user, store.media.get(user.id) ?? [], fields)
  return "unknown" in built ? nonexisting(built) : json(built.ok)
})

export const PhotoTwin = [sandboxRoute("GET", "/sandbox/photo/:nodeId", node)] as const
