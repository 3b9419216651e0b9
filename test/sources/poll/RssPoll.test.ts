/**
 * The rss connector over real HTTP (a node:http server in the test): the exact items of a served
 * feed, conditional requests and 304s, the body-hash short-circuit, the User-Agent, garbage, a
 * 50 MB body, redirects (followed, looping, too many), a hanging host, Retry-After, the politeness
 * limit per host and the SSRF guard.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { PollFailed, type PollResult, emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { retryAfterOf } from "../../../src/layers/sources/poll/Fetch.ts"
import { fixture, serve, withPoller, pollServerForFile } from "./PollServerFixtures.ts"
import { USER_AGENT_PRODUCT } from "../../../src/domain/infra/Version.ts"

const server = pollServerForFile()

const items = (r: PollResult) => (r._tag === "Items" ? r.items : [])
const flipPoll = (identifier: string) => SourcePoller.use((p) => Effect.flip(p.poll("rss", identifier, emptyPollState)))

const FEED = `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Site</title><link>/</link><image><url>/logo.png</url></image>
<item><title>Second</title><link>/posts/2</link><guid>p2</guid><pubDate>Sat, 01 Jun 2024 12:00:00 GMT</pubDate>
<author>ann@example.org (Ann)</author><category>news</category><enclosure url="/media/2.jpg" type="image/jpeg"/>
<description>&lt;p&gt;Hello &lt;a href="/x"&gt;x&lt;/a&gt;&lt;/p&gt;</description></item>
<item><title>First</title><link>/posts/1</link><pubDate>Fri, 31 May 2024 12:00:00 GMT</pubDate></item>
</channel></rss>`

describe("rss over HTTP", () => {
  it.live("a feed → exactly its items; validators and body hash kept; a descriptive User-Agent", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/feed.xml", serve(FEED, { "content-type": "application/rss+xml", etag: "\"v1\"", "last-modified": "Sat, 01 Jun 2024 12:00:00 GMT" }))
      const poller = yield* SourcePoller
      const feedUrl = `${server.url}/feed.xml`
      const result = yield* poller.poll("rss", feedUrl, emptyPollState)
      assert.strictEqual(result._tag, "Items")
      const common = { module: "rss", feedTitle: "Site", siteUrl: `${server.url}/`, feedUrl, feedImage: `${server.url}/logo.png` } as const
      assert.deepStrictEqual(items(result), [
        {
          ...common,
          id: "p2",
          url: `${server.url}/posts/2`,
          publishedAt: new Date("2024-06-01T12:00:00Z"),
          eventAt: new Date("2024-06-01T12:00:00Z"),
          title: "Second",
          author: "Ann",
          contentHtml: `<p>Hello <a href="${server.url}/x">x</a></p>`,
          mediaUrl: `${server.url}/media/2.jpg`,
          categories: ["news"]
        },
        {
          ...common,
          id: `${server.url}/posts/1`,
          url: `${server.url}/posts/1`,
          publishedAt: new Date("2024-05-31T12:00:00Z"),
          eventAt: new Date("2024-05-31T12:00:00Z"),
          title: "First",
          author: null,
          contentHtml: null,
          mediaUrl: null,
          categories: []
        }
      ])
      assert.deepStrictEqual({ ...result.state, bodyHash: typeof result.state.bodyHash }, {
        etag: "\"v1\"",
        lastModified: "Sat, 01 Jun 2024 12:00:00 GMT",
        bodyHash: "string",
        cursor: null
      })
      const request = server.hits("/feed.xml")[0]!
      assert.strictEqual(request.headers["user-agent"], `${USER_AGENT_PRODUCT} (+ops@example.org)`)
      assert.include(request.headers["accept"] ?? "", "application/rss+xml")
      assert.isUndefined(request.headers["if-none-match"])
      assert.isUndefined(request.headers["if-modified-since"])
    })))

  it.live("the next poll is conditional; a 304 is NotModified and does no further work", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/cond.xml", (req, res) => {
        if (req.headers["if-none-match"] === "\"v1\"") res.writeHead(304, { etag: "\"v1\"" }).end()
        else res.writeHead(200, { etag: "\"v1\"", "last-modified": "Sat, 01 Jun 2024 12:00:00 GMT" }).end(FEED)
      })
      const poller = yield* SourcePoller
      const first = yield* poller.poll("rss", `${server.url}/cond.xml`, emptyPollState)
      const second = yield* poller.poll("rss", `${server.url}/cond.xml`, first.state)
      assert.deepStrictEqual(second, { _tag: "NotModified", state: first.state })
      const [, conditional] = server.hits("/cond.xml")
      assert.strictEqual(conditional!.headers["if-none-match"], "\"v1\"")
      assert.strictEqual(conditional!.headers["if-modified-since"], "Sat, 01 Jun 2024 12:00:00 GMT")
    })))

  it.live("without validators, an identical body is NotModified and a changed one is read", () =>
    withPoller({}, Effect.gen(function*() {
      let body = FEED
      server.routes.set("/plain.xml", (_req, res) => res.writeHead(200, { "content-type": "text/xml" }).end(body))
      const poller = yield* SourcePoller
      const url = `${server.url}/plain.xml`
      const first = yield* poller.poll("rss", url, emptyPollState)
      const same = yield* poller.poll("rss", url, first.state)
      assert.deepStrictEqual(same, { _tag: "NotModified", state: first.state })
      body = FEED.replace("<title>Second</title>", "<title>Second, edited</title>")
      const changed = yield* poller.poll("rss", url, first.state)
      assert.strictEqual(changed._tag, "Items")
      assert.strictEqual(items(changed)[0]!.module === "rss" && (items(changed)[0] as { title: string }).title, "Second, edited")
      assert.notStrictEqual(changed.state.bodyHash, first.state.bodyHash)
    })))

  it.live("a real-world feed served with its bytes (ISO-8859-1 RSS): all 40 items", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/jn.xml", serve(fixture("rss-jn-iso-8859-1.xml"), { "content-type": "application/rss+xml; charset=ISO-8859-1" }))
      const result = yield* SourcePoller.use((p) => p.poll("rss", `${server.url}/jn.xml`, emptyPollState))
      assert.strictEqual(items(result).length, 40)
      assert.strictEqual((items(result)[0] as { title: string }).title, "Mãe de utente é a nova presidente da Raríssimas")
    })))

  it.live("garbage, a web page and an empty body are `unreadable`", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/garbage", serve(Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 131) % 256)), { "content-type": "application/octet-stream" }))
      server.routes.set("/page", serve("<!doctype html><html><body>Not a feed</body></html>", { "content-type": "text/html; charset=utf-8" }))
      server.routes.set("/empty", serve(""))
      const garbage = yield* flipPoll(`${server.url}/garbage`)
      const page = yield* flipPoll(`${server.url}/page`)
      const empty = yield* flipPoll(`${server.url}/empty`)
      assert.deepStrictEqual([garbage.kind, page.kind, empty.kind], ["unreadable", "unreadable", "unreadable"])
      assert.include(page.message, "a web page, not an RSS or Atom feed")
    })))

  it.live("404 and 410 are `gone`; 500 is `http`; 429 and 503 keep Retry-After (seconds or a date)", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/404", serve("no", {}, 404))
      server.routes.set("/410", serve("gone", {}, 410))
      server.routes.set("/500", serve("oops", {}, 500))
      server.routes.set("/429", serve("slow down", { "retry-after": "120" }, 429))
      server.routes.set("/503", serve("later", { "retry-after": new Date(Date.now() + 90_000).toUTCString() }, 503))
      const r404 = yield* flipPoll(`${server.url}/404`)
      const r410 = yield* flipPoll(`${server.url}/410`)
      const r500 = yield* flipPoll(`${server.url}/500`)
      const r429 = yield* flipPoll(`${server.url}/429`)
      const r503 = yield* flipPoll(`${server.url}/503`)
      assert.deepStrictEqual([r404.kind, r404.status, r410.kind, r500.kind, r500.status], ["gone", 404, "gone", "http", 500])
      assert.deepStrictEqual([r429.kind, r429.status, r429.retryAfterSeconds], ["http", 429, 120])
      assert.strictEqual(r503.status, 503)
      assert.isTrue(r503.retryAfterSeconds! >= 85 && r503.retryAfterSeconds! <= 91, String(r503.retryAfterSeconds))
    })))

  it.live("a 50 MB body is cut off without being read (chunked, and with a Content-Length)", () =>
    withPoller({ maxBodyBytes: 1024 * 1024 }, Effect.gen(function*() {
      const FIFTY_MB = 50 * 1024 * 1024
      let written = 0
      server.routes.set("/huge", (_req, res) => {
        res.writeHead(200, { "content-type": "application/rss+xml" })
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        const pump = () => {
          while (written < FIFTY_MB && !res.destroyed) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          res.end()
        }
        res.write("<rss><channel><title>")
        pump()
      })
      const chunked = yield* flipPoll(`${server.url}/huge`)
      assert.strictEqual(chunked.kind, "too-large")
      assert.include(chunked.message, "more than 1 MiB")
      yield* Effect.sleep("200 millis")
      assert.isTrue(written < 10 * 1024 * 1024, `the server wrote ${written} bytes`)

      let sent = 0
      server.routes.set("/declared", (_req, res) => {
        res.writeHead(200, { "content-type": "application/rss+xml", "content-length": String(FIFTY_MB) })
        const chunk = Buffer.alloc(64 * 1024, 0x62)
        const pump = () => {
          while (sent < FIFTY_MB && !res.destroyed) {
            sent += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          res.end()
        }
        pump()
      })
      const declared = yield* flipPoll(`${server.url}/declared`)
      assert.strictEqual(declared.kind, "too-large")
      yield* Effect.sleep("200 millis")
      assert.isTrue(sent < 10 * 1024 * 1024, `the server wrote ${sent} bytes`)
    })))

  it.live("redirects are followed by hand (relative Location; links resolve against the final URL)", () =>
    withPoller({}, Effect.gen(function*() {
      server.routes.set("/old", serve("", { location: "/moved/feed.xml" }, 301))
      server.routes.set("/moved/feed.xml", serve(`<rss><channel><title>M</title><item><link>item.html</link></item></channel></rss>`))
      const result = yield* SourcePoller.use((p) => p.poll("rss", `${server.url}/old`, emptyPollState))
      assert.deepStrictEqual(items(result).map((i) => [i.id, i.url]), [[`${server.url}/moved/item.html`, `${server.url}/moved/item.html`]])
      assert.strictEqual((items(result)[0] as { feedUrl: string }).feedUrl, `${server.url}/old`)
    })))

  it.live("a redirect loop and a chain longer than the limit fail the poll", () =>
    withPoller({ maxRedirects: 3 }, Effect.gen(function*() {
      server.routes.set("/a", serve("", { location: "/b" }, 302))
      server.routes.set("/b", serve("", { location: `${server.url}/a` }, 307))
      const loop = yield* flipPoll(`${server.url}/a`)
      assert.strictEqual(loop.kind, "http")
      assert.include(loop.message, "redirects in a loop")
      assert.deepStrictEqual([server.hits("/a").length, server.hits("/b").length], [1, 1])
      for (let i = 0; i < 6; i++) server.routes.set(`/r${i}`, serve("", { location: `/r${i + 1}` }, 302))
      const chain = yield* flipPoll(`${server.url}/r0`)
      assert.include(chain.message, "redirects more than 3 times")
      assert.strictEqual(server.hits("/r4").length, 0)
    })))

  it.live("a host that never answers is a `timeout` within the time-out", () =>
    withPoller({ timeout: "300 millis" }, Effect.gen(function*() {
      server.routes.set("/hang", () => {})
      const started = Date.now()
      const hang = yield* flipPoll(`${server.url}/hang`)
      assert.strictEqual(hang.kind, "timeout")
      assert.include(hang.message, "did not answer within")
      assert.isTrue(Date.now() - started < 2000)
    })))

  // Each answer takes RESPONSE_MS, well within the time-out (room for a loaded machine: the server's
  // timers and the client's share this process); the three turns (6 requests, 2 at a time) take longer
  // than the time-out, so a time-out that counted the wait for a turn would fail the last two.
  it.live("at most `hostConcurrency` requests in flight per host; the others wait their turn (not timed out)", () =>
    withPoller({ hostConcurrency: 2, timeout: "2500 millis", concurrency: 6 }, Effect.gen(function*() {
      const RESPONSE_MS = 1_000
      for (let i = 0; i < 6; i++) {
        server.routes.set(`/slow${i}.xml`, (_req, res) => {
          setTimeout(() => res.writeHead(200).end(`<rss><channel><item><guid>${i}</guid></item></channel></rss>`), RESPONSE_MS)
        })
      }
      const sources = Array.from({ length: 6 }, (_, i) => ({ identifier: `${server.url}/slow${i}.xml`, previous: emptyPollState }))
      const results = yield* SourcePoller.use((p) => p.pollMany("rss", sources))
      assert.strictEqual(server.stats.maxInFlight, 2)
      assert.deepStrictEqual(sources.map((s) => {
        const r = results.get(s.identifier)
        return r instanceof PollFailed ? r.kind : r?._tag
      }), ["Items", "Items", "Items", "Items", "Items", "Items"])
    })))

  it.live("the SSRF guard: loopback and private addresses are refused before any request, unless allowed", () =>
    withPoller({ rss: { allowPrivateAddresses: false } }, Effect.gen(function*() {
      server.routes.set("/feed.xml", serve(FEED))
      const direct = yield* flipPoll(`${server.url}/feed.xml`)
      const byName = yield* flipPoll(server.url.replace("127.0.0.1", "localhost") + "/feed.xml")
      const internal = yield* flipPoll("http://10.1.2.3/feed.xml")
      const file = yield* flipPoll("file:///etc/passwd")
      assert.include(direct.message, "private or loopback")
      assert.include(byName.message, "private or loopback")
      assert.include(internal.message, "private or loopback")
      assert.strictEqual(file.kind, "unreadable")
      assert.strictEqual(server.requests.length, 0)
    })))

  it.live("the SSRF guard: IPv6 forms of private IPv4 addresses are refused before any request", () =>
    withPoller({ rss: { allowPrivateAddresses: false } }, Effect.gen(function*() {
      const port = new URL(server.url).port
      for (const host of ["[::127.0.0.1]", "[::ffff:127.0.0.1]", "[::ffff:0:127.0.0.1]", "[2002:7f00:1::]", "[64:ff9b::a01:203]", "[2001:0:4136:e378::1]"]) {
        const e = yield* flipPoll(`http://${host}:${port}/feed.xml`)
        assert.include(e.message, "private or loopback", host)
      }
      assert.strictEqual(server.requests.length, 0)
    })))

  it.live("DNS rebinding: a host that resolves publicly at the check and privately at connect time is refused", () => {
    let calls = 0
    // The first answer (the check before the request) is public; every later one (the connection) loopback.
    const rebinding = (_host: string) =>
      Promise.resolve([calls++ === 0 ? { address: "93.184.216.34", family: 4 } : { address: "127.0.0.1", family: 4 }])
    return withPoller({ rss: { resolve: rebinding } }, Effect.gen(function*() {
      server.routes.set("/feed.xml", serve(FEED))
      const e = yield* flipPoll(server.url.replace("127.0.0.1", "localhost") + "/feed.xml")
      assert.include(e.message, "private or loopback")
      assert.isAtLeast(calls, 2, "the connection asked the resolver again")
      assert.strictEqual(server.requests.length, 0)
    }))
  })
})

describe("Retry-After", () => {
  const now = Date.parse("2024-06-01T12:00:00Z")
  it.each([
    [{ "retry-after": "120" }, 120],
    [{ "retry-after": "Sat, 01 Jun 2024 12:01:30 GMT" }, 90],
    [{ "x-rate-limit-reset": String(now / 1000 + 300) }, 300],
    [{ "ratelimit-reset": String(now / 1000 + 42) }, 42],
    [{ "x-ratelimit-reset": "17" }, 17],
    [{ "retry-after": "soon" }, undefined],
    [{}, undefined]
  ] as const)("%j → %s", (headers, expected) => {
    assert.strictEqual(retryAfterOf(headers, now), expected)
  })
})
