/**
 * Instagram Graph API twin: `GET /sandbox/photo/:nodeId?fields=...&access_token=`. With
 * `fields=business_discovery.username(<name>){...}` it looks the name up among professional
 * accounts (any numeric node id stands for the gateway's own account); otherwise the node id itself
 * must be a seeded IG user. Errors carry Graph's codes: 2500 no token, 110 unknown user name,
 * 100 unknown node.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, json, param, query } from "./Http.ts"
import { PHOTO_USERS, type PhotoUser } from "./Seed.ts"

const graphError = (code: number, message: string, extra: Record<string, unknown> = {}) =>
  json({ error: { message, type: "OAuthException", code, fbtrace_id: "sandbox", ...extra } }, 400)

const fieldsOf = (user: PhotoUser, fields: ReadonlyArray<string>) => {
  const all: Record<string, string> = { id: user.id, username: user.username, ...(user.name === undefined ? {} : { name: user.name }) }
  return Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]]))
}

const node = Effect.gen(function*() {
  const q = yield* query
  if ((q.get("access_token") ?? "") === "" && (yield* bearer) === "") {
    return graphError(2500, "An active access token must be used to query information about the current user.")
  }
  const nodeId = yield* param("nodeId")
  const fields = q.get("fields") ?? "id"
  const discovery = /^business_discovery\.username\(([^)]*)\)(?:\{([^}]*)\})?$/.exec(fields)
  if (discovery !== null) {
    if (!/^\d+$/.test(nodeId)) return graphError(100, "Unsupported get request.", { error_subcode: 33 })
    const name = (discovery[1] ?? "").toLowerCase()
    const user = PHOTO_USERS.find((u) => u.username === name)
    if (user === undefined) {
      return graphError(110, "Invalid user id", {
        error_subcode: 2207013,
        is_transient: false,
        error_user_title: "Cannot find User",
        error_user_msg: `The user with username: ${name} cannot be found.`
      })
    }
    return json({ business_discovery: fieldsOf(user, (discovery[2] ?? "id").split(",")), id: nodeId })
  }
  const user = PHOTO_USERS.find((u) => u.id === nodeId)
  if (user === undefined) {
    return graphError(
      100,
      `Unsupported get request. Object with ID '${nodeId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      { error_subcode: 33 }
    )
  }
  return json(fieldsOf(user, fields.split(",")))
})

export const PhotoTwin = [sandboxRoute("GET", "/sandbox/photo/:nodeId", node)] as const
