/**
 * One plain item per module, built through the Item schema (so a fixture the schema refuses fails
 * loudly); each test overrides the fields it is about.
 */
import { Schema } from "effect"
import { Item } from "../../src/services/delivery/render/Item.ts"
import type { ForumItem, MicroblogItem, PhotoItem, RssItem, StreamingItem, VideoItem } from "../../src/services/delivery/render/Item.ts"

/** 2024-05-01 12:34:56 UTC: British Summer Time in London (UTC+1). */
export const AT = new Date("2024-05-01T12:34:56.789Z")
const make = Schema.decodeUnknownSync(Item)

export const rss = (o: Partial<RssItem> = {}): RssItem =>
  make({
    module: "rss", id: "guid-1", url: "https://news.test/posts/1", publishedAt: AT, eventAt: AT,
    title: "Hello world", author: "Ann", contentHtml: "<p>Body <b>bold</b></p>", mediaUrl: null, categories: [],
    feedTitle: "News Site", siteUrl: "https://news.test/", feedUrl: "https://news.test/feed.xml",
    feedImage: "https://news.test/logo.png", ...o
  }) as RssItem

export const forum = (o: Partial<ForumItem> = {}): ForumItem =>
  make({
    module: "forum", id: "t3_abc", url: "https://www.reddit.com/r/typescript/comments/abc/hello/", publishedAt: AT,
    eventAt: AT, subreddit: "typescript", subredditFullname: "t5_2qh1i", author: "bob", title: "Hello world",
    flair: "Meme", over18: false, contentUrl: "https://example.test/article", selfText: null,
    permalink: "https://www.reddit.com/r/typescript/comments/abc/hello/", subredditIcon: "https://img.test/ts.png", ...o
  }) as ForumItem

export const streaming = (o: Partial<StreamingItem> = {}): StreamingItem =>
  make({
    module: "streaming", id: "stream-9", url: "https://www.twitch.tv/caster", publishedAt: AT, eventAt: AT,
    event: "live", displayName: "Caster", username: "caster", game: "Chess", gameId: "743", status: "Blitz night",
    channelUrl: "https://www.twitch.tv/caster", profileImage: "https://img.test/caster.png", ...o
  }) as StreamingItem

export const microblog = (o: Partial<MicroblogItem> = {}): MicroblogItem =>
  make({
    module: "microblog", id: "1790000000000000000", url: "https://x.com/jdoe/status/1790000000000000000",
    publishedAt: AT, eventAt: AT, screenName: "jdoe", name: "Jane Doe", text: "Hello world", mediaUrls: [],
    postUrl: "https://x.com/jdoe/status/1790000000000000000", profileImage: "https://img.test/jdoe.png", ...o
  }) as MicroblogItem

export const video = (o: Partial<VideoItem> = {}): VideoItem =>
  make({
    module: "video", id: "dQw4w9WgXcQ", url: "https://www.youtube.com/watch?v=dQw4w9WgXcQ", publishedAt: AT,
    eventAt: AT, event: "added", title: "Hello world", channel: "Chan", durationSeconds: 212,
    description: "A song.", tags: [], thumbnail: "https://i.ytimg.test/vi/dQw4w9WgXcQ/hq.jpg",
    watchUrl: "https://www.youtube.com/watch?v=dQw4w9WgXcQ", channelThumbnail: "https://img.test/chan.png",
    ageRestricted: false, ...o
  }) as VideoItem

export const photo = (o: Partial<PhotoItem> = {}): PhotoItem =>
  make({
    module: "photo", id: "C0ffee", url: "https://www.instagram.com/p/C0ffee/", publishedAt: AT, eventAt: AT,
    event: "post", username: "pat", fullname: "Pat Smith", caption: "Hello world", mediaUrl: "https://cdn.test/p.jpg",
    hashtags: [], profileUrl: "https://www.instagram.com/pat/", permalink: "https://www.instagram.com/p/C0ffee/",
    profilePicture: "https://img.test/pat.png", ...o
  }) as PhotoItem

/** The modules with a word filter, their item with a given filtered text, and what reasons call it. */
export const TEXT_MODULES = [
  { module: "rss", label: "the title", withText: (t: string) => rss({ title: t }) },
  { module: "forum", label: "the title", withText: (t: string) => forum({ title: t }) },
  { module: "video", label: "the title", withText: (t: string) => video({ title: t }) },
  { module: "microblog", label: "the text", withText: (t: string) => microblog({ text: t }) },
  { module: "photo", label: "the caption", withText: (t: string) => photo({ caption: t }) }
] as const
