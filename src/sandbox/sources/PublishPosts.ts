/**
 * Publishing at the sources whose events are posts: rss (an item of a feed, created on first
 * publish), forum (a subreddit's post), microblog (a post, a reply or a repost), photo (a media).
 */
import { subredditId } from "./Forum.ts"
import { event, fail, type Outcome } from "./PublishOutcome.ts"
import type { EventBody } from "./PublishBody.ts"
import { FORUMS, MICROBLOG_USERS, PHOTO_USERS } from "./Seed.ts"
import type { SourceStore } from "./Store.ts"

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").slice(0, 50) || "post"

export const publishRss = (store: SourceStore, identifier: string, base: string, b: EventBody, now: number): Outcome => {
  const name = /(?:^|\/sandbox\/rss\/)([A-Za-z0-9_-]{1,64})(?:\.xml)?$/.exec(identifier)?.[1]
  if (name === undefined || (identifier.includes("/") && !identifier.endsWith(".xml"))) {
    return fail(404, `rss: "${identifier}" is not a sandbox feed (use its short name, e.g. "news", or its URL)`)
  }
  let feed = store.feeds.get(name)
  if (feed === undefined) {
    feed = { name, format: "rss", title: `Sandbox feed ${name}`, siteUrl: `https://example.com/sandbox/${name}`, entries: [], changedAt: 0, rendered: undefined }
    store.feeds.set(name, feed)
  }
  const id = b.id ?? `sandbox-${name}-${store.next()}`
  if (feed.entries.some((e) => e.id === id)) return fail(409, `id: the feed ${name} already has an item "${id}"`, "id")
  const entry = {
    id,
    title: b.title ?? null,
    link: b.url ?? `https://example.com/sandbox/${name}/${encodeURIComponent(id)}`,
    publishedAt: b.publishedAt ?? now,
    text: b.text ?? null,
    author: b.author ?? null,
    categories: b.flair === undefined ? [] : [b.flair],
    media: b.media
  }
  feed.entries.push(entry)
  store.touch(feed, now)
  const url = `${base}/sandbox/rss/${name}.xml`
  return event("rss", url, url, { ...entry, type: b.type, url: entry.link, flair: b.flair ?? null, nsfw: b.nsfw, game: null })
}

export const publishForum = (store: SourceStore, identifier: string, b: EventBody, now: number): Outcome => {
  const wanted = identifier.replace(/^\/?r\//i, "").toLowerCase()
  const forum = FORUMS.find((f) => f.name.toLowerCase() === wanted)
  if (forum === undefined) return fail(404, `forum: no sandbox subreddit "${identifier}" (${FORUMS.map((f) => f.name).join(", ")})`)
  const posts = store.listOf(store.posts, forum.name.toLowerCase())
  const id = b.id?.replace(/^t3_/, "") ?? `sbx${store.next().toString(36)}`
  if (posts.some((p) => p.id === id)) return fail(409, `id: r/${forum.name} already has a post "${id}"`, "id")
  const title = b.title ?? `Sandbox post ${id}`
  const permalink = b.url ?? `/r/${forum.name}/comments/${id}/${slug(title)}/`
  const post = {
    id,
    title,
    text: b.text ?? "",
    author: b.author ?? "sandbox_user",
    flair: b.flair ?? null,
    nsfw: b.nsfw,
    createdAt: b.publishedAt ?? now,
    permalink,
    link: null
  }
  posts.push(post)
  return event("forum", forum.name, forum.name, {
    id: `t3_${id}`,
    type: b.type,
    title,
    text: post.text,
    url: permalink.startsWith("/") ? `https://www.reddit.com${permalink}` : permalink,
    author: post.author,
    flair: post.flair,
    nsfw: post.nsfw,
    game: null,
    publishedAt: post.createdAt,
    media: []
  }, { subreddit_id: subredditId(forum) })
}

/** An X-like snowflake: time since X's epoch, then a sequence, so ids sort by time. */
const snowflake = (at: number, seq: number) => ((BigInt(Math.max(0, at - 1288834974657)) << 22n) + BigInt(seq % 4096)).toString()

export const publishMicroblog = (store: SourceStore, identifier: string, b: EventBody, now: number): Outcome => {
  const name = identifier.replace(/^@/, "").toLowerCase()
  const user = MICROBLOG_USERS.find((u) => u.id === identifier || u.username.toLowerCase() === name)
  if (user === undefined) return fail(404, `microblog: no sandbox user "${identifier}" (${MICROBLOG_USERS.map((u) => u.username).join(", ")})`)
  const fromUrl = b.url === undefined ? undefined : /^https?:\/\/(?:www\.)?(?:x|twitter)\.com\/[^/]+\/status\/(\d{1,19})\/?$/.exec(b.url)?.[1]
  if (b.url !== undefined && fromUrl === undefined) {
    return fail(400, `url: a post's URL is https://x.com/${user.username}/status/<id> (or leave it out)`, "url")
  }
  if (b.id !== undefined && fromUrl !== undefined && b.id !== fromUrl) return fail(400, "url: names another post than id", "url")
  const tweets = store.listOf(store.tweets, user.id)
  const createdAt = b.publishedAt ?? now
  const id = b.id ?? fromUrl ?? snowflake(createdAt, store.next())
  if (tweets.some((t) => t.id === id)) return fail(409, `id: @${user.username} already has a post "${id}"`, "id")
  const body = b.text ?? b.title ?? `Sandbox post ${id}`
  const repostOf = b.repostOf ?? null
  const tweet = {
    id,
    text: repostOf === null ? body : `RT @${user.username}: ${body}`,
    createdAt,
    media: b.media,
    replyTo: b.replyTo ?? null,
    repostOf
  }
  tweets.push(tweet)
  return event("microblog", user.username, user.id, {
    id,
    type: b.type,
    title: null,
    text: tweet.text,
    url: `https://x.com/${user.username}/status/${id}`,
    author: user.name,
    flair: null,
    nsfw: b.nsfw,
    game: null,
    publishedAt: createdAt,
    media: b.media
  }, { reply_to: tweet.replyTo, repost_of: repostOf })
}

export const publishPhoto = (store: SourceStore, identifier: string, b: EventBody, now: number): Outcome => {
  const name = identifier.replace(/^@/, "").toLowerCase()
  const user = PHOTO_USERS.find((u) => u.id === identifier || u.username === name)
  if (user === undefined) return fail(404, `photo: no sandbox account "${identifier}" (${PHOTO_USERS.map((u) => u.username).join(", ")})`)
  const list = store.listOf(store.media, user.id)
  const id = b.id ?? `1790${String(store.next()).padStart(13, "0")}`
  if (list.some((m) => m.id === id)) return fail(409, `id: @${user.username} already has a post "${id}"`, "id")
  const shortcode = Buffer.from(BigInt(id).toString(16).padStart(16, "0"), "hex").toString("base64url")
  const media = {
    id,
    caption: b.text ?? b.title ?? null,
    media: b.media.length > 0 ? b.media : [`https://example.com/sandbox/photo/${id}.jpg`],
    permalink: b.url ?? `https://www.instagram.com/p/${shortcode}/`,
    timestamp: b.publishedAt ?? now
  }
  list.push(media)
  return event("photo", user.username, user.id, {
    id,
    type: b.type,
    title: null,
    text: media.caption,
    url: media.permalink,
    author: user.username,
    flair: null,
    nsfw: b.nsfw,
    game: null,
    publishedAt: media.timestamp,
    media: media.media
  })
}
