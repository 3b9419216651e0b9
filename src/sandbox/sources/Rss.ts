/**
 * Feeds served by the sandbox itself: the RSS 2.0 feed `news`, the Atom feed `atom`, any feed
 * created by publishing to a new short name (`/sandbox/rss/<name>.xml`, RSS 2.0), and an HTML page
 * that is not a feed. Each feed is rendered once per change, with a strong ETag and Last-Modified;
 * `If-None-Match` (which wins when both are sent, RFC 9110) and `If-Modified-Since` get a 304.
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { sandboxRoute } from "../SandboxRoute.ts"
import { param } from "./Http.ts"
import { RSS_PATHS } from "./Seed.ts"
import type { RssEntry, RssFeed } from "./Store.ts"
import { SourceState } from "./Store.ts"

const xml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;" })[c]!)
const cdata = (s: string) => `<![CDATA[${s.replace(/]]>/g, "]]]]><![CDATA[>")}]]>`
const httpDate = (ms: number) => new Date(ms).toUTCString()
const isoDate = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Newest first; among equal dates the later published first. */
const ordered = (feed: RssFeed): ReadonlyArray<RssEntry> =>
  feed.entries.map((e, i) => ({ e, i })).sort((a, b) => b.e.publishedAt - a.e.publishedAt || b.i - a.i).map((x) => x.e)

const rssItem = (e: RssEntry) =>
  [
    "    <item>",
    ...(e.title === null ? [] : [`      <title>${xml(e.title)}</title>`]),
    `      <link>${xml(e.link)}</link>`,
    `      <guid isPermaLink="false">${xml(e.id)}</guid>`,
    `      <pubDate>${httpDate(e.publishedAt)}</pubDate>`,
    ...(e.author === null ? [] : [`      <dc:creator>${xml(e.author)}</dc:creator>`]),
    ...e.categories.map((c) => `      <category>${xml(c)}</category>`),
    ...e.media.map((m) => `      <enclosure url="${xml(m)}" type="image/jpeg" length="0"/>`),
    ...(e.text === null ? [] : [`      <description>${cdata(e.text)}</description>`]),
    "    </item>"
  ].join("\n")

const rss = (feed: RssFeed) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>${xml(feed.title)}</title>
    <link>${xml(feed.siteUrl)}</link>
    <description>Items for the sandbox's RSS feeds.</description>
    <lastBuildDate>${httpDate(feed.changedAt)}</lastBuildDate>
${ordered(feed).map(rssItem).join("\n")}
  </channel>
</rss>
`

const atomEntry = (e: RssEntry) =>
  [
    "  <entry>",
    `    <title>${xml(e.title ?? "")}</title>`,
    `    <id>${xml(e.id)}</id>`,
    `    <published>${isoDate(e.publishedAt)}</published>`,
    `    <updated>${isoDate(e.publishedAt)}</updated>`,
    `    <link href="${xml(e.link)}"/>`,
    ...(e.author === null ? [] : [`    <author><name>${xml(e.author)}</name></author>`]),
    ...e.categories.map((c) => `    <category term="${xml(c)}"/>`),
    ...e.media.map((m) => `    <link rel="enclosure" type="image/jpeg" href="${xml(m)}"/>`),
    ...(e.text === null ? [] : [`    <summary type="html">${xml(e.text)}</summary>`]),
    "  </entry>"
  ].join("\n")

const atom = (feed: RssFeed) =>
  `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${xml(feed.title)}</title>
  <id>urn:sandbox:feed:${xml(feed.name)}</id>
  <updated>${isoDate(feed.changedAt)}</updated>
  <link href="${xml(feed.siteUrl)}"/>
${ordered(feed).map(atomEntry).join("\n")}
</feed>
`

const rendered = (feed: RssFeed) => {
  if (feed.rendered === undefined) {
    const body = feed.format === "atom" ? atom(feed) : rss(feed)
    feed.rendered = {
      body,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
      lastModified: httpDate(feed.changedAt)
    }
  }
  return feed.rendered
}

/** RFC 9110 §13.1: If-None-Match decides when present (weak comparison); else If-Modified-Since. */
const unchanged = (headers: Readonly<Record<string, string | undefined>>, feed: RssFeed, etag: string): boolean => {
  const inm = headers["if-none-match"]
  if (inm !== undefined) {
    return inm.split(",").map((t) => t.trim()).some((t) => t === "*" || t.replace(/^W\//, "") === etag)
  }
  const ims = headers["if-modified-since"]
  if (ims === undefined) return false
  const since = Date.parse(ims)
  return Number.isFinite(since) && feed.changedAt <= since
}

const serveFeed = (name: string) =>
  Effect.gen(function*() {
    const store = yield* SourceState
    const request = yield* HttpServerRequest.HttpServerRequest
    const feed = store.feeds.get(name)
    if (feed === undefined) return HttpServerResponse.text("Not Found", { status: 404 })
    const r = rendered(feed)
    const headers = { etag: r.etag, "last-modified": r.lastModified, "cache-control": "no-cache" }
    if (unchanged(request.headers, feed, r.etag)) return HttpServerResponse.empty({ status: 304, headers })
    const contentType = feed.format === "atom" ? "application/atom+xml; charset=utf-8" : "application/rss+xml; charset=utf-8"
    return HttpServerResponse.text(r.body, { contentType, headers })
  })

/** `/sandbox/rss/<name>.xml` of a feed created by publishing (the seeded ones have their own routes). */
const created = Effect.gen(function*() {
  const file = yield* param("feed")
  const name = /^([A-Za-z0-9_-]{1,64})\.xml$/.exec(file)?.[1]
  return name === undefined ? HttpServerResponse.text("Not Found", { status: 404 }) : yield* serveFeed(name)
})

const HTML = `<!DOCTYPE html>
<html><head><title>Not a feed</title></head><body><p>This page is HTML, not RSS or Atom.</p></body></html>
`

/** `/sandbox/rss/news.xml` → `news`; the short names the publish route takes. */
export const feedNameOfPath = (path: string): string | undefined => /\/sandbox\/rss\/([A-Za-z0-9_-]{1,64})\.xml$/.exec(path)?.[1]

export const RssTwin = [
  sandboxRoute("GET", RSS_PATHS.rss, serveFeed("news")),
  sandboxRoute("GET", RSS_PATHS.atom, serveFeed("atom")),
  sandboxRoute("GET", RSS_PATHS.notAFeed, Effect.succeed(HttpServerResponse.text(HTML, { contentType: "text/html; charset=utf-8" }))),
  sandboxRoute("GET", "/sandbox/rss/:feed", created)
] as const
