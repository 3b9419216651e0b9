/**
 * X API v2 twin: `GET /sandbox/microblog/2/users/by/username/:username`,
 * `GET /sandbox/microblog/2/users/:id` and the user's posts timeline
 * `GET /sandbox/microblog/2/users/:id/tweets` (newest first; `exclude=replies,retweets`,
 * `max_results` 5–100, `since_id`, `tweet.fields`, `expansions=author_id,attachments.media_keys`,
 * `user.fields`, `media.fields`; only the fields asked for are sent). Bearer token required. Like X,
 * an unknown user is a 200 with an `errors` array, a malformed name or id a 400, texts come with
 * `&`, `<`, `>` escaped, and a post over 280 characters has its whole text in `note_tweet`.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { bearer, json, param, query } from "./Http.ts"
import { MICROBLOG_USERS, type MicroblogUser } from "./Seed.ts"
import type { Tweet } from "./Store.ts"
import { SourceState } from "./Store.ts"

export const microblogProfileImage = (u: MicroblogUser) => `https://pbs.twimg.com/profile_images/sandbox/${u.username}_normal.png`

const unauthorized = json({ title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" }, 401)

const invalid = (parameter: string, value: string) =>
  json({
    errors: [{ parameters: { [parameter]: [value] }, message: `The \`${parameter}\` query parameter value [${value}] is not valid` }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request"
  }, 400)

const notFound = (parameter: string, value: string) =>
  json({
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

const fieldsOf = (q: URLSearchParams, name: string) =>
  new Set((q.get(name) ?? "").split(",").map((f) => f.trim()).filter((f) => f !== ""))

/** A user object: id, name and username always, the other fields when asked for. */
const userObject = (user: MicroblogUser, fields: ReadonlySet<string>) => ({
  id: user.id,
  name: user.name,
  username: user.username,
  ...(fields.has("profile_image_url") ? { profile_image_url: microblogProfileImage(user) } : {}),
  ...(fields.has("created_at") ? { created_at: "2020-01-01T00:00:00.000Z" } : {}),
  ...(fields.has("description") ? { description: `${user.name} in the sandbox.` } : {}),
  ...(fields.has("protected") ? { protected: false } : {}),
  ...(fields.has("verified") ? { verified: false } : {})
})

const answer = (user: MicroblogUser | undefined, parameter: string, value: string, fields: ReadonlySet<string>) =>
  user !== undefined ? json({ data: userObject(user, fields) }) : notFound(parameter, value)

const byUsername = Effect.gen(function*() {
  if ((yield* bearer) === "") return unauthorized
  const name = yield* param("username")
  if (!/^[A-Za-z0-9_]{1,15}$/.test(name)) return invalid("username", name)
  return answer(MICROBLOG_USERS.find((u) => u.username.toLowerCase() === name.toLowerCase()), "username", name, fieldsOf(yield* query, "user.fields"))
})

const byId = Effect.gen(function*() {
  if ((yield* bearer) === "") return unauthorized
  const id = yield* param("id")
  if (!/^\d{1,19}$/.test(id)) return invalid("id", id)
  return answer(MICROBLOG_USERS.find((u) => u.id === id), "id", id, fieldsOf(yield* query, "user.fields"))
})

const escapeX = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const mediaKeys = (t: Tweet) => t.media.map((_, i) => `3_${t.id}${i}`)

const tweetObject = (t: Tweet, user: MicroblogUser, fields: ReadonlySet<string>) => {
  const chars = [...t.text]
  const long = chars.length > 280
  const referenced = t.replyTo !== null
    ? [{ type: "replied_to", id: t.replyTo }]
    : t.repostOf !== null
    ? [{ type: "retweeted", id: t.repostOf }]
    : []
  return {
    id: t.id,
    text: escapeX(long ? chars.slice(0, 280).join("") : t.text),
    edit_history_tweet_ids: [t.id],
    ...(fields.has("created_at") ? { created_at: new Date(t.createdAt).toISOString() } : {}),
    ...(fields.has("author_id") ? { author_id: user.id } : {}),
    ...(fields.has("conversation_id") ? { conversation_id: t.replyTo ?? t.id } : {}),
    ...(fields.has("attachments") && t.media.length > 0 ? { attachments: { media_keys: mediaKeys(t) } } : {}),
    ...(fields.has("note_tweet") && long ? { note_tweet: { text: escapeX(t.text) } } : {}),
    ...(fields.has("referenced_tweets") && referenced.length > 0 ? { referenced_tweets: referenced } : {}),
    ...(fields.has("in_reply_to_user_id") && t.replyTo !== null ? { in_reply_to_user_id: user.id } : {}),
    ...(fields.has("lang") ? { lang: "en" } : {}),
    ...(fields.has("possibly_sensitive") ? { possibly_sensitive: false } : {})
  }
}

const mediaObject = (key: string, url: string, fields: ReadonlySet<string>) => ({
  media_key: key,
  type: "photo",
  ...(fields.has("url") ? { url } : {}),
  ...(fields.has("width") ? { width: 1200 } : {}),
  ...(fields.has("height") ? { height: 675 } : {})
})

const timeline = Effect.gen(function*() {
  if ((yield* bearer) === "") return unauthorized
  const id = yield* param("id")
  if (!/^\d{1,19}$/.test(id)) return invalid("id", id)
  const q = yield* query
  const rawMax = q.get("max_results")
  const max = rawMax === null ? 10 : Number(rawMax)
  if (!Number.isInteger(max) || max < 5 || max > 100) return invalid("max_results", rawMax ?? "")
  const exclude = fieldsOf(q, "exclude")
  for (const e of exclude) if (e !== "replies" && e !== "retweets") return invalid("exclude", e)
  const sinceId = q.get("since_id")
  if (sinceId !== null && !/^\d{1,19}$/.test(sinceId)) return invalid("since_id", sinceId)
  const user = MICROBLOG_USERS.find((u) => u.id === id)
  if (user === undefined) return notFound("id", id)
  const store = yield* SourceState
  const tweetFields = fieldsOf(q, "tweet.fields")
  const expansions = fieldsOf(q, "expansions")
  const all = (store.tweets.get(id) ?? [])
    .filter((t) => !(exclude.has("replies") && t.replyTo !== null) && !(exclude.has("retweets") && t.repostOf !== null))
    .filter((t) => sinceId === null || BigInt(t.id) > BigInt(sinceId))
    .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0))
  const page = all.slice(0, max)
  if (page.length === 0) return json({ meta: { result_count: 0 } })
  const media = expansions.has("attachments.media_keys")
    ? page.flatMap((t) => t.media.map((url, i) => mediaObject(mediaKeys(t)[i]!, url, fieldsOf(q, "media.fields"))))
    : []
  const includes = {
    ...(expansions.has("author_id") ? { users: [userObject(user, fieldsOf(q, "user.fields"))] } : {}),
    ...(media.length > 0 ? { media } : {})
  }
  return json({
    data: page.map((t) => tweetObject(t, user, tweetFields)),
    ...(Object.keys(includes).length === 0 ? {} : { includes }),
    meta: {
      result_count: page.length,
      newest_id: page[0]!.id,
      oldest_id: page.at(-1)!.id,
      ...(all.length > page.length ? { next_token: `sandbox${page.at(-1)!.id}` } : {})
    }
  })
})

export const MicroblogTwin = [
  sandboxRoute("GET", "/sandbox/microblog/2/users/by/username/:username", byUsername),
  sandboxRoute("GET", "/sandbox/microblog/2/users/:id", byId),
  sandboxRoute("GET", "/sandbox/microblog/2/users/:id/tweets", timeline)
] as const
