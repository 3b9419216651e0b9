/**
 * Reddit twin: `POST /sandbox/forum/api/v1/access_token` (client credentials, HTTP Basic), then
 * `GET /sandbox/forum/r/:name/about`, `/r/:name/api/link_flair_v2` and `/r/:name/new.json` (the
 * published posts, newest first, as a `Listing` of `t3` things) with the bearer token.
 * Unknown subreddit → 404, private → 403 `{"reason":"private"}`, names match case-insensitively.
 * Without `raw_json=1` texts come HTML-escaped, as Reddit sends them.
 */
import { Clock, Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, formOrQuery, header, json, param, query } from "./Http.ts"
import { type Forum as SeedForum, FORUMS } from "./Seed.ts"
import type { ForumPost } from "./Store.ts"
import { SourceState } from "./Store.ts"

/** A subreddit's fullname (`t5_…`), fixed per seeded forum. */
export const subredditId = (forum: SeedForum) => `t5_sbx${FORUMS.indexOf(forum).toString(36).padStart(3, "0")}`
const iconOf = (forum: SeedForum) => `https://styles.redditmedia.com/sandbox/${forum.name.toLowerCase()}/icon.png`

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
      url: `/r/${f.name}/`,
      name: subredditId(f),
      community_icon: iconOf(f),
      icon_img: ""
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

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const thing = (forum: SeedForum, p: ForumPost, raw: boolean) => {
  const text = (s: string) => (raw ? s : escapeHtml(s))
  const permalinkUrl = p.permalink.startsWith("/") ? `https://www.reddit.com${p.permalink}` : p.permalink
  const url = p.link ?? permalinkUrl
  return {
    kind: "t3",
    data: {
      id: p.id,
      name: `t3_${p.id}`,
      title: text(p.title),
      selftext: text(p.text),
      author: p.author,
      author_fullname: `t2_${p.author.toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 8) || "sandbox"}`,
      subreddit: forum.name,
      subreddit_id: subredditId(forum),
      subreddit_name_prefixed: `r/${forum.name}`,
      subreddit_type: "public",
      over_18: p.nsfw,
      link_flair_text: p.flair,
      link_flair_type: "text",
      link_flair_richtext: p.flair === null ? [] : [{ e: "text", t: p.flair }],
      permalink: p.permalink,
      url,
      domain: p.link === null ? `self.${forum.name}` : new URL(p.link).host,
      is_self: p.link === null,
      created: p.createdAt / 1000,
      created_utc: p.createdAt / 1000,
      score: 1,
      ups: 1,
      num_comments: 0,
      thumbnail: p.link === null ? "self" : "default",
      spoiler: false,
      stickied: false,
      locked: false,
      archived: false,
      quarantine: false
    }
  }
}

const newPosts = Effect.gen(function*() {
  const l = yield* lookup
  if (l.denied !== undefined) return l.denied
  const store = yield* SourceState
  const q = yield* query
  const limit = Math.min(100, Math.max(1, Number(q.get("limit") ?? "25") || 25))
  const posts = [...(store.posts.get(l.forum.name.toLowerCase()) ?? [])].sort((a, b) => b.createdAt - a.createdAt)
  const after = q.get("after")
  const start = after === null ? 0 : posts.findIndex((p) => `t3_${p.id}` === after) + 1
  const page = posts.slice(start, start + limit)
  const last = page.at(-1)
  const now = yield* Clock.currentTimeMillis
  return json(
    {
      kind: "Listing",
      data: {
        after: last !== undefined && start + limit < posts.length ? `t3_${last.id}` : null,
        dist: page.length,
        modhash: "",
        geo_filter: null,
        children: page.map((p) => thing(l.forum, p, q.get("raw_json") === "1")),
        before: null
      }
    },
    200,
    // Reddit's own budget headers (per 10-minute window).
    { "x-ratelimit-used": "1", "x-ratelimit-remaining": "99.0", "x-ratelimit-reset": String(600 - Math.floor(now / 1000) % 600) }
  )
})

export const ForumTwin = [
  sandboxRoute("POST", "/sandbox/forum/api/v1/access_token", token),
  sandboxRoute("GET", "/sandbox/forum/r/:name/about", about),
  sandboxRoute("GET", "/sandbox/forum/r/:name/api/link_flair_v2", flairs),
  sandboxRoute("GET", "/sandbox/forum/r/:name/new.json", newPosts)
] as const
