/**
 * The body of `POST /sandbox/sources/:module/:identifier/events` (delivery.md §7), checked field by
 * field with every problem reported at once. Beyond §7's fields the sandbox takes `media` (image
 * URLs: rss enclosures, microblog photos, photo media), `reply_to` / `repost_of` (microblog: a
 * reply or a repost, which `exclude=replies,retweets` leaves out) and `duration` (video, ISO 8601).
 */
import type { SandboxModule } from "./Store.ts"

export interface EventBody {
  readonly type: string
  readonly id: string | undefined
  readonly title: string | undefined
  readonly text: string | undefined
  readonly url: string | undefined
  readonly author: string | undefined
  readonly flair: string | undefined
  readonly nsfw: boolean
  readonly game: string | undefined
  readonly publishedAt: number | undefined
  readonly media: ReadonlyArray<string>
  readonly replyTo: string | undefined
  readonly repostOf: string | undefined
  readonly duration: string | undefined
}

export interface BodyProblem {
  readonly message: string
  readonly path: string
}

export const EVENT_TYPES: Record<SandboxModule, ReadonlyArray<string>> = {
  rss: ["post"],
  forum: ["post"],
  microblog: ["post"],
  photo: ["post"],
  video: ["added", "updated"],
  streaming: ["live", "offline"]
}

/** Id formats of each platform (rss: any guid). */
const ID_FORMAT: Record<SandboxModule, { readonly pattern: RegExp; readonly says: string }> = {
  rss: { pattern: /^[^\s][\s\S]{0,511}$/, says: "a non-empty string of at most 512 characters" },
  forum: { pattern: /^(t3_)?[a-z0-9]{1,13}$/, says: "a Reddit post id (base 36, e.g. \"1abc2d\", optionally \"t3_\"-prefixed)" },
  microblog: { pattern: /^\d{1,19}$/, says: "a numeric post id of at most 19 digits" },
  photo: { pattern: /^\d{1,25}$/, says: "a numeric media id" },
  video: { pattern: /^[A-Za-z0-9_-]{11}$/, says: "an 11-character YouTube video id" },
  streaming: { pattern: /^\d{1,20}(:offline)?$/, says: "a numeric stream id" }
}

const isHttpUrl = (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)

export const parseEventBody = (
  module: SandboxModule,
  body: unknown
): { readonly body: EventBody } | { readonly problems: ReadonlyArray<BodyProblem> } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { problems: [{ message: "the body must be a JSON object with at least \"type\"", path: "" }] }
  }
  const b = body as Record<string, unknown>
  const problems: Array<BodyProblem> = []
  const str = (key: string, max = 10_000): string | undefined => {
    const v = b[key]
    if (v === undefined || v === null) return undefined
    if (typeof v === "number" && key === "id") return String(v)
    if (typeof v !== "string") {
      problems.push({ message: `${key}: expected a string`, path: key })
      return undefined
    }
    if ([...v].length > max) problems.push({ message: `${key}: at most ${max} characters`, path: key })
    return v
  }
  const type = str("type")
  const allowed = EVENT_TYPES[module]
  if (type === undefined) problems.push({ message: `type: required, one of ${allowed.join(", ")}`, path: "type" })
  else if (!allowed.includes(type)) {
    problems.push({ message: `type: "${type}" is not an event of ${module} (${allowed.join(", ")})`, path: "type" })
  }
  const id = str("id", 512)
  if (id !== undefined && !ID_FORMAT[module].pattern.test(id)) {
    problems.push({ message: `id: expected ${ID_FORMAT[module].says}`, path: "id" })
  }
  const url = str("url", 2048)
  if (url !== undefined && !isHttpUrl(url)) problems.push({ message: "url: expected an absolute http(s) URL", path: "url" })
  const nsfw = b["nsfw"]
  if (nsfw !== undefined && nsfw !== null && typeof nsfw !== "boolean") problems.push({ message: "nsfw: expected a boolean", path: "nsfw" })
  const published = str("published_at", 64)
  const publishedAt = published === undefined ? undefined : Date.parse(published)
  if (published !== undefined && !Number.isFinite(publishedAt)) {
    problems.push({ message: "published_at: expected an ISO 8601 date-time, e.g. 2025-01-07T10:00:00Z", path: "published_at" })
  }
  const media: Array<string> = []
  const rawMedia = b["media"]
  if (rawMedia !== undefined && rawMedia !== null) {
    if (!Array.isArray(rawMedia)) problems.push({ message: "media: expected an array of image URLs", path: "media" })
    else {
      rawMedia.forEach((m, i) => {
        if (typeof m === "string" && isHttpUrl(m)) media.push(m)
        else problems.push({ message: `media[${i}]: expected an absolute http(s) URL`, path: `media[${i}]` })
      })
    }
  }
  const replyTo = str("reply_to", 19)
  const repostOf = str("repost_of", 19)
  for (const [key, v] of [["reply_to", replyTo], ["repost_of", repostOf]] as const) {
    if (v !== undefined && !/^\d{1,19}$/.test(v)) problems.push({ message: `${key}: expected a numeric post id`, path: key })
  }
  if (replyTo !== undefined && repostOf !== undefined) {
    problems.push({ message: "reply_to and repost_of: a post is a reply or a repost, not both", path: "repost_of" })
  }
  const duration = str("duration", 32)
  if (duration !== undefined && !/^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/.test(duration)) {
    problems.push({ message: "duration: expected an ISO 8601 duration such as PT4M13S", path: "duration" })
  }
  const fields = {
    title: str("title"),
    text: str("text"),
    author: str("author", 256),
    flair: str("flair", 256),
    game: str("game", 256)
  }
  if (problems.length > 0) return { problems }
  return {
    body: {
      type: type!,
      id,
      url,
      nsfw: nsfw === true,
      publishedAt,
      media,
      replyTo,
      repostOf,
      duration,
      ...fields
    }
  }
}
