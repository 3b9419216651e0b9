/**
 * Reddit twin: `POST /sandbox/forum/api/v1/access_token` (client credentials, HTTP Basic), then
 * `GET /sandbox/forum/r/:name/about` and `/r/:name/api/link_flair_v2` with the bearer token.
 * Unknown subreddit → 404, private → 403 `{"reason":"private"}`, names match case-insensitively.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, formOrQuery, header, json, param } from "./Http.ts"
import { FORUMS } from "./Seed.ts"

const unauthorized = json({ message: "Unauthorized", error: 401 }, 401)

const token = Effect.gen(function*() {
  const basic = /^Basic\s+(\S+)$/i.exec(yield* header("authorization"))?.[1]
  const [id = "", secret = ""] = basic === undefined ? [] : Buffer.from(basic, "base64").toString("utf8").split(":")
  if (id === "" || secret === "") return unauthorized
  const form = yield* formOrQuery
  if (form.get("grant_type") !== "client_credentials") return json({ error: "unsupported_grant_type" }, 400)
  return json({ access_token: "sandbox-reddit-app-token", token_type: "bearer", expires_in: 86400, scope: "*" })
})

const lookup = Effect.gen(function*() {
  if ((yield* bearer) === "") return { denied: unauthorized }
  const name = (yield* param("name")).toLowerCase()
  const forum = FORUMS.find((f) => f.name.toLowerCase() === name)
  if (forum === undefined) return { denied: json({ message: "Not Found", error: 404 }, 404) }
  if (forum.private === true) return { denied: json({ reason: "private", message: "Forbidden", error: 403 }, 403) }
  return { forum }
})

const about = Effect.gen(function*() {
  const l = yield* lookup
  if (l.denied !== undefined) return l.denied
  const f = l.forum
  return json({
    kind: "t5",
    data: {
      display_name: f.name,
      display_name_prefixed: `r/${f.name}`,
      title: f.title,
      public_description: `${f.title} in the sandbox.`,
      subscribers: 1000,
      over18: false,
      subreddit_type: "public",
      url: `/r/${f.name}/`
    }
  })
})

const flairs = Effect.gen(function*() {
  const l = yield* lookup
  if (l.denied !== undefined) return l.denied
  return json(l.forum.flairs.map((text, i) => ({
    type: "text",
    text,
    id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`,
    text_editable: false,
    background_color: "",
    text_color: "dark",
    mod_only: false,
    allowable_content: "all",
    max_emojis: 10,
    richtext: [],
    css_class: ""
  })))
})

export const ForumTwin = [
  sandboxRoute("POST", "/sandbox/forum/api/v1/access_token", token),
  sandboxRoute("GET", "/sandbox/forum/r/:name/about", about),
  sandboxRoute("GET", "/sandbox/forum/r/:name/api/link_flair_v2", flairs)
] as const
