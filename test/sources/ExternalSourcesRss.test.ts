/**
 * The live ExternalSources rss client against the sandbox's feeds over real HTTP: feeds read, pages
 * that are not feeds, redirects, private addresses refused (SSRF, DNS rebinding), a body over the
 * cap, a hanging upstream, 5xx and 429.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"
import { fault, SandboxUrl } from "./SandboxServerFixtures.ts"
import { Env, message, withSources } from "./ExternalSourcesFixtures.ts"

layer(Env, { excludeTestServices: true })("ExternalSourcesHttp against the sandbox twins", (it) => {
  describe("rss", () => {
    it.effect("RSS 2.0 and Atom feeds served by the sandbox are read, URL normalised", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        const url = yield* SandboxUrl
        assert.deepStrictEqual(yield* s.rss(`${url}/sandbox/rss/news.xml`), {
          url: `${url}/sandbox/rss/news.xml`,
          title: "Sandbox News & Updates"
        })
        assert.strictEqual((yield* s.rss(`${url}/sandbox/rss/atom.xml`)).title, "Sandbox Atom Feed")
        assert.strictEqual((yield* s.rss(`${url.toUpperCase().replace("HTTP", "http")}/sandbox/rss/news.xml`)).url, `${url}/sandbox/rss/news.xml`)
      }))

    it.effect("a page that is not a feed is BadRequest; a missing one NotFound", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        const url = yield* SandboxUrl
        const e = yield* Effect.flip(s.rss(`${url}/sandbox/rss/not-a-feed.html`))
        assert.strictEqual(e._tag, "BadRequest")
        // The poller's words (one reader, delivery.md §10).
        assert.strictEqual(message(e), `The feed at ${url}/sandbox/rss/not-a-feed.html is a web page, not an RSS or Atom feed.`)
        assert.strictEqual((yield* Effect.flip(s.rss(`${url}/sandbox/rss/missing.xml`)))._tag, "NotFound")
      }))

    it.effect("non-http schemes and non-URLs are BadRequest", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        for (const bad of ["ftp://example.com/feed.xml", "file:///etc/passwd", "javascript:alert(1)", "not a url"]) {
          assert.strictEqual((yield* Effect.flip(s.rss(bad)))._tag, "BadRequest", bad)
        }
      }))

    it.effect("redirects are followed, a loop is BadRequest", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        const url = yield* SandboxUrl
        assert.strictEqual((yield* s.rss(`${url}/test/redirect-to-rss`)).title, "Sandbox News & Updates")
        assert.strictEqual((yield* Effect.flip(s.rss(`${url}/test/redirect-loop`)))._tag, "BadRequest")
      }))

    it.effect("production mode refuses loopback and private addresses (SSRF)", () =>
      withSources(
        (o) => ({ ...o, rss: { allowPrivateAddresses: false } }),
        (s) =>
          Effect.gen(function*() {
            const url = yield* SandboxUrl
            for (const target of [`${url}/sandbox/rss/news.xml`, "http://10.1.2.3/feed", "http://[::1]/feed", "http://localhost/feed", "http://169.254.169.254/latest"]) {
              const e = yield* Effect.flip(s.rss(target))
              assert.strictEqual(e._tag, "BadRequest", target)
              assert.include(message(e), "private or loopback", target)
            }
            // IPv6 forms of a private IPv4 address: compatible, mapped, 6to4, NAT64.
            const port = new URL(url).port
            for (const host of ["[::127.0.0.1]", "[::ffff:127.0.0.1]", "[2002:7f00:1::]", "[64:ff9b::7f00:1]"]) {
              const e = yield* Effect.flip(s.rss(`http://${host}:${port}/sandbox/rss/news.xml`))
              assert.strictEqual(e._tag, "BadRequest", host)
              assert.include(message(e), "private or loopback", host)
            }
          })
      ))

    it.effect("DNS rebinding: public at the check, loopback at connect time → refused at connect time", () => {
      let calls = 0
      const rebinding = (_host: string) =>
        Promise.resolve([calls++ === 0 ? { address: "93.184.216.34", family: 4 } : { address: "127.0.0.1", family: 4 }])
      return withSources(
        (o) => ({ ...o, rss: { allowPrivateAddresses: false, resolve: rebinding } }),
        (s) =>
          Effect.gen(function*() {
            const url = yield* SandboxUrl
            const e = yield* Effect.flip(s.rss(`${url.replace("127.0.0.1", "localhost")}/sandbox/rss/news.xml`))
            assert.strictEqual(e._tag, "BadRequest")
            assert.include(message(e), "private or loopback")
            assert.isAtLeast(calls, 2, "the connection asked the resolver again")
          })
      )
    })

    it.effect("a body over the cap is BadRequest; hanging is RequestTimeout; 5xx ServiceUnavailable", () =>
      Effect.gen(function*() {
        const url = yield* SandboxUrl
        const big = yield* withSources(
          (o) => ({ ...o, rss: { allowPrivateAddresses: true, maxBytes: 100 } }),
          (s) => Effect.flip(s.rss(`${url}/sandbox/rss/news.xml`))
        )
        assert.strictEqual(big._tag, "BadRequest")
        const s = yield* ExternalSources
        yield* fault("GET /sandbox/rss/news.xml", "hang")
        assert.strictEqual((yield* Effect.flip(s.rss(`${url}/sandbox/rss/news.xml`)))._tag, "RequestTimeout")
        yield* fault("GET /sandbox/rss/news.xml", "500")
        const down = yield* Effect.flip(s.rss(`${url}/sandbox/rss/news.xml`))
        assert.strictEqual(down._tag, "ServiceUnavailable")
        assert.isAtLeast(Number((down as { problems: ReadonlyArray<{ additionalProperties?: Record<string, unknown> }> }).problems[0]?.additionalProperties?.["retry_after"]), 1)
        // An RSS 429 passes the upstream's Retry-After on (the fault helper's is 3 s).
        yield* fault("GET /sandbox/rss/news.xml", "429")
        const limited = yield* Effect.flip(s.rss(`${url}/sandbox/rss/news.xml`))
        assert.deepStrictEqual((limited as { problems: ReadonlyArray<{ additionalProperties?: unknown }> }).problems[0]?.additionalProperties, { retry_after: 3 })
      }))
  })
})
