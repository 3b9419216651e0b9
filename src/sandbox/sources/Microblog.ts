/**
 * X API v2 twin: `GET /sandbox/microblog/2/users/by/username/:username` and
 * `GET /sandbox/microblog/2/users/:id`, bearer token required. Like X, an unknown user is a 200 with
 * an `errors` array, a malformed name or id a 400.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, json, param } from "./Http.ts"
import { MICROBLOG_USERS, type MicroblogUser } from "./Seed.ts"

const unauthorized = json({ title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" }, 401)

const invalid = (parameter: string, value: string) =>
  json({
    errors: [{ parameters: { [parameter]: [value] }, message: `The \`${parameter}\` query parameter value [${value}] is not valid` }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request"
  }, 400)

const answer = (user: MicroblogUser | undefined, parameter: string, value: string) =>
  user !== undefined
    ? json({ data: { id: user.id, name: user.name, username: user.username } })
    : json({
      errors: [{
        value,
        detail: `Could not find user with ${parameter}: [${value}].`,
        title: "Not Found Error",
        resource_type: "user",
        parameter,
        resource_id: value,
        type: "https://api.twitter.com/2/problems/resource-not-found"
      }]
    })

const byUsername = Effect.gen(function*() {
  if ((yield* bearer) === "") return unauthorized
  const name = yield* param("username")
  if (!/^[A-Za-z0-9_]{1,15}$/.test(name)) return invalid("username", name)
  return answer(MICROBLOG_USERS.find((u) => u.username.toLowerCase() === name.toLowerCase()), "username", name)
})

const byId = Effect.gen(function*() {
  if ((yield* bearer) === "") return unauthorized
  const id = yield* param("id")
  if (!/^\d{1,19}$/.test(id)) return invalid("id", id)
  return answer(MICROBLOG_USERS.find((u) => u.id === id), "id", id)
})

export const MicroblogTwin = [
  sandboxRoute("GET", "/sandbox/microblog/2/users/by/username/:username", byUsername),
  sandboxRoute("GET", "/sandbox/microblog/2/users/:id", byId)
] as const
