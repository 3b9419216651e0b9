/**
 * Feeds served by the sandbox itself: an RSS 2.0 feed, an Atom feed and an HTML page that is not a
 * feed, for the gateway's RSS client (which may fetch loopback addresses in sandbox mode).
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { sandboxRoute } from "../SandboxRoute.ts"
import { ATOM_TITLE, RSS_PATHS } from "./Seed.ts"

const RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Sandbox News &amp; Updates</title>
    <link>https://example.com/sandbox</link>
    <description>Items for the sandbox's RSS feeds.</description>
    <item>
      <title>Welcome to the sandbox</title>
      <link>https://example.com/sandbox/welcome</link>
      <guid isPermaLink="false">sandbox-rss-1</guid>
      <pubDate>Mon, 06 Jan 2025 10:00:00 GMT</pubDate>
      <description><![CDATA[<p>First <b>item</b> of the feed.</p>]]></description>
    </item>
    <item>
      <title>Second item</title>
      <link>https://example.com/sandbox/second</link>
      <guid isPermaLink="false">sandbox-rss-2</guid>
      <pubDate>Tue, 07 Jan 2025 10:00:00 GMT</pubDate>
    </item>
  </channel>
</rss>
`

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${ATOM_TITLE}</title>
  <id>urn:uuid:00000000-0000-4000-8000-000000000a70</id>
  <updated>2025-01-07T10:00:00Z</updated>
  <link href="https://example.com/sandbox/atom"/>
  <entry>
    <title>Atom entry one</title>
    <id>urn:uuid:00000000-0000-4000-8000-000000000a71</id>
    <updated>2025-01-07T10:00:00Z</updated>
    <link href="https://example.com/sandbox/atom/1"/>
    <summary>The first entry.</summary>
  </entry>
</feed>
`

const HTML = `<!DOCTYPE html>
<html><head><title>Not a feed</title></head><body><p>This page is HTML, not RSS or Atom.</p></body></html>
`

const serve = (body: string, contentType: string) => Effect.succeed(HttpServerResponse.text(body, { contentType }))

export const RssTwin = [
  sandboxRoute("GET", RSS_PATHS.rss, serve(RSS, "application/rss+xml; charset=utf-8")),
  sandboxRoute("GET", RSS_PATHS.atom, serve(ATOM, "application/atom+xml; charset=utf-8")),
  sandboxRoute("GET", RSS_PATHS.notAFeed, serve(HTML, "text/html; charset=utf-8"))
] as const
