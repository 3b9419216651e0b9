/**
 * The live ExternalSources clients against their sandbox twins over real HTTP: found by name and by
 * id, not found, not configured, refused credentials, hanging upstream (time-out), 5xx and 429.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import type { ExternalSourcesOptions } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { ExternalSourcesHttp } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ExternalSources, type SourceError } from "../../src/services/ExternalSources.ts"
import { fault, SandboxServer, SandboxUrl } from "./SandboxServer.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"

const TIMEOUT = "1 second"

/** Runs `f` with a client built from the sandbox options, changed by `change`. */
const withSources = <A, E, R>(
  change: (o: ExternalSourcesOptions, url: string) => ExternalSourcesOptions,
  f: (s: ExternalSources["Service"]) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const url = yield* SandboxUrl
    const options = change(SandboxMode.sourcesOptions(url, TIMEOUT), url)
    return yield* ExternalSources.use(f).pipe(Effect.provide(ExternalSourcesHttp.layer(options)))
  })

const Env = Layer.unwrap(Effect.gen(function*() {
  const url = yield* SandboxUrl
  return ExternalSourcesHttp.layer(SandboxMode.sourcesOptions(url, TIMEOUT))
})).pipe(
  Layer.provideMerge(SandboxServer),
  // The outages and refusals these tests provoke are logged as warnings: kept, not printed.
  Layer.provideMerge(CapturedLogs.layer)
)

const message = (e: { readonly problems: ReadonlyArray<{ readonly message: string }> }) => e.problems[0]?.message ?? ""

layer(Env, { excludeTestServices: true })("ExternalSourcesHttp against the sandbox twins", (it) => {
  describe("streaming (Twitch)", () => {
    it.effect("finds a user by login (any case, with @) and by id", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        const byLogin = yield* s.lookupUser("streaming", "@SandboxStreamer")
        assert.deepStrictEqual(byLogin, {
          id: "41000001",
          userName: "sandboxstreamer",
          displayName: "SandboxStreamer",
          url: "https://www.twitch.tv/sandboxstreamer"
        })
        const byId = yield* s.lookupUser("streaming", "41000002")
        assert.strictEqual(byId.userName, "pixelpainter")
      }))

    it.effect("an unknown or malformed login is NotFound", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        const unknown = yield* Effect.flip(s.lookupUser("streaming", "nobody_here"))
        assert.strictEqual(unknown._tag, "NotFound")
        const malformed = yield* Effect.flip(s.lookupUser("streaming", "bad name!"))
        assert.strictEqual(malformed._tag, "NotFound")
      }))

    it.effect("games by name (any case) and by id; gameNames keeps the order and drops unknown ids", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.deepStrictEqual(yield* s.lookupGame("Minecraft"), { id: "27471", name: "Minecraft" })
        assert.deepStrictEqual(yield* s.lookupGame("just chatting"), { id: "509658", name: "Just Chatting" })
        assert.deepStrictEqual(yield* s.lookupGame("509658"), { id: "509658", name: "Just Chatting" })
        assert.strictEqual((yield* Effect.flip(s.lookupGame("No Such Game")))._tag, "NotFound")
        assert.deepStrictEqual(yield* s.gameNames(["509658", "999", "27471"]), ["Just Chatting", "Minecraft"])
        assert.deepStrictEqual(yield* s.gameNames([]), [])
      }))

    it.effect("a 401 on a cached app token fetches a new token and retries once", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        yield* s.lookupUser("streaming", "sandboxstreamer")
        yield* fault("GET /sandbox/streaming/helix/users", "401")
        const user = yield* s.lookupUser("streaming", "sandboxstreamer")
        assert.strictEqual(user.id, "41000001")
      }))

    it.effect("a hanging upstream is RequestTimeout naming the source", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        yield* fault("GET /sandbox/streaming/helix/games", "hang")
        const e = yield* Effect.flip(s.lookupGame("Minecraft"))
        assert.strictEqual(e._tag, "RequestTimeout")
        assert.include(message(e), "streaming")
      }))

    it.effect("5xx is ServiceUnavailable naming the source; 429 carries the upstream's retry-after", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        yield* fault("GET /sandbox/streaming/helix/users", "500")
        const e = yield* Effect.flip(s.lookupUser("streaming", "sandboxstreamer"))
        assert.strictEqual(e._tag, "ServiceUnavailable")
        assert.include(message(e), "streaming source (Twitch)")
        // Every 503 says when to retry (decisions.md "Errors"), also when the upstream named no wait.
        assert.isAtLeast(Number(e.problems[0]?.additionalProperties?.["retry_after"]), 1)
        yield* fault("GET /sandbox/streaming/helix/users", "429")
        const limited = yield* Effect.flip(s.lookupUser("streaming", "sandboxstreamer"))
        assert.strictEqual(limited._tag, "ServiceUnavailable")
        assert.deepStrictEqual(limited.problems[0]?.additionalProperties, { retry_after: 3 })
      }))

    it.effect("a token endpoint that refuses the client secret is ServiceUnavailable", () =>
      withSources(
        (o) => ({ ...o, streaming: o.streaming && { ...o.streaming, clientSecret: Redacted.make("") } }),
        (s) => Effect.flip(s.lookupUser("streaming", "sandboxstreamer"))
      ).pipe(Effect.map((e) => {
        assert.strictEqual(e._tag, "ServiceUnavailable")
        assert.include(message(e), "streaming")
      })))
  })

  describe("video (YouTube)", () => {
    it.effect("by channel id: userName is the custom URL alias, else the channel id", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.deepStrictEqual(yield* s.lookupUser("video", "UCsandbox000000000000001"), {
          id: "UCsandbox000000000000001",
          userName: "@sandboxchannel",
          displayName: "Sandbox Channel",
          url: "https://www.youtube.com/@sandboxchannel"
        })
        const plain = yield* s.lookupUser("video", "UCsandbox000000000000002")
        assert.strictEqual(plain.userName, "UCsandbox000000000000002")
        assert.strictEqual(plain.displayName, "Sandbox Cooking")
      }))

    it.effect("by handle and by title", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.strictEqual((yield* s.lookupUser("video", "@SandboxMusic")).id, "UCsandbox000000000000003")
        assert.strictEqual((yield* s.lookupUser("video", "Sandbox Cooking")).id, "UCsandbox000000000000002")
        assert.strictEqual((yield* s.lookupUser("video", "sandbox music")).id, "UCsandbox000000000000003")
      }))

    it.effect("unknown id, handle or title is NotFound; 5xx is ServiceUnavailable", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.strictEqual((yield* Effect.flip(s.lookupUser("video", "UCsandbox0000000000000099")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.lookupUser("video", "@nobodyhere")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.lookupUser("video", "Nothing Like This")))._tag, "NotFound")
        yield* fault("GET /sandbox/video/youtube/v3/channels", "500")
        const e = yield* Effect.flip(s.lookupUser("video", "UCsandbox000000000000001"))
        assert.strictEqual(e._tag, "ServiceUnavailable")
        assert.include(message(e), "video")
      }))

    it.effect("a request without an API key is refused by the twin: ServiceUnavailable", () =>
      withSources(
        (o) => ({ ...o, video: o.video && { ...o.video, apiKey: Redacted.make("") } }),
        (s) => Effect.flip(s.lookupUser("video", "UCsandbox000000000000001"))
      ).pipe(Effect.map((e) => assert.strictEqual(e._tag, "ServiceUnavailable"))))
  })

  describe("microblog (X)", () => {
    it.effect("by user name (with @, any case) and by id", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.deepStrictEqual(yield* s.lookupUser("microblog", "@SandboxBird"), {
          id: "1500000000000000001",
          userName: "sandboxbird",
          displayName: "Sandbox Bird",
          url: "https://x.com/sandboxbird"
        })
        assert.strictEqual((yield* s.lookupUser("microblog", "1500000000000000002")).userName, "gatewaynews")
      }))

    it.effect("unknown is NotFound; hanging is RequestTimeout; no bearer token is ServiceUnavailable", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.strictEqual((yield* Effect.flip(s.lookupUser("microblog", "nobody")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.lookupUser("microblog", "not a name")))._tag, "NotFound")
        yield* fault("GET /sandbox/microblog/2/users/by/username/{username}", "hang")
        const timedOut = yield* Effect.flip(s.lookupUser("microblog", "sandboxbird"))
        assert.strictEqual(timedOut._tag, "RequestTimeout")
        const refused = yield* withSources(
          (o) => ({ ...o, microblog: o.microblog && { ...o.microblog, bearerToken: Redacted.make("") } }),
          (s) => Effect.flip(s.lookupUser("microblog", "sandboxbird"))
        )
        assert.strictEqual(refused._tag, "ServiceUnavailable")
        assert.include(message(refused), "credentials")
      }))
  })

  describe("photo (Instagram)", () => {
    it.effect("by user name (business discovery) and by id; no name → the user name", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.deepStrictEqual(yield* s.lookupUser("photo", "SandboxPhotos"), {
          id: "17841400000000101",
          userName: "sandboxphotos",
          displayName: "Sandbox Photos",
          url: "https://www.instagram.com/sandboxphotos/"
        })
        const byId = yield* s.lookupUser("photo", "17841400000000102")
        assert.strictEqual(byId.userName, "sandbox.travel")
        assert.strictEqual(byId.displayName, "sandbox.travel")
      }))

    it.effect("unknown is NotFound; 5xx is ServiceUnavailable; no token is ServiceUnavailable", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.strictEqual((yield* Effect.flip(s.lookupUser("photo", "nobody")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.lookupUser("photo", "12345")))._tag, "NotFound")
        yield* fault("GET /sandbox/photo/{nodeId}", "500")
        const e = yield* Effect.flip(s.lookupUser("photo", "sandboxphotos"))
        assert.strictEqual(e._tag, "ServiceUnavailable")
        assert.include(message(e), "photo")
        const refused = yield* withSources(
          (o) => ({ ...o, photo: o.photo && { ...o.photo, accessToken: Redacted.make("") } }),
          (s) => Effect.flip(s.lookupUser("photo", "sandboxphotos"))
        )
        assert.strictEqual(refused._tag, "ServiceUnavailable")
      }))
  })

  describe("forum (Reddit)", () => {
    it.effect("a subreddit with or without r/, any case: canonical name and flairs", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.deepStrictEqual(yield* s.forum("SandboxGaming"), { name: "SandboxGaming", flairs: ["Discussion", "News", "Meme"] })
        assert.deepStrictEqual(yield* s.forum("r/sandboxnews"), { name: "SandboxNews", flairs: ["World", "Tech"] })
        assert.deepStrictEqual(yield* s.forum("/r/SandboxNoFlair/"), { name: "SandboxNoFlair", flairs: [] })
      }))

    it.effect("unknown, private or malformed is NotFound; hanging is RequestTimeout", () =>
      Effect.gen(function*() {
        const s = yield* ExternalSources
        assert.strictEqual((yield* Effect.flip(s.forum("NothingHere")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.forum("SandboxPrivate")))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(s.forum("bad name!")))._tag, "NotFound")
        yield* fault("GET /sandbox/forum/r/{name}/about", "hang")
        const e = yield* Effect.flip(s.forum("SandboxGaming"))
        assert.strictEqual(e._tag, "RequestTimeout")
        assert.include(message(e), "forum")
      }))
  })

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
        assert.include(message(e), "is not an RSS or Atom feed")
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

  describe("not configured", () => {
    it.effect("every credentialed source answers ServiceUnavailable naming it and its variables", () =>
      withSources(
        (o) => ({ timeout: TIMEOUT, rss: o.rss }),
        (s) =>
          Effect.gen(function*() {
            const cases: ReadonlyArray<readonly [Effect.Effect<unknown, SourceError>, string]> = [
              [s.lookupUser("streaming", "x"), "The streaming source is not configured (set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET)."],
              [s.lookupUser("video", "x"), "The video source is not configured (set YOUTUBE_API_KEY)."],
              [s.lookupUser("microblog", "x"), "The microblog source is not configured (set X_BEARER_TOKEN)."],
              [s.lookupUser("photo", "x"), "The photo source is not configured (set INSTAGRAM_ACCESS_TOKEN and INSTAGRAM_USER_ID)."],
              [s.forum("x"), "The forum source is not configured (set REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET)."],
              [s.lookupGame("Minecraft"), "The streaming source is not configured (set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET)."],
              [s.gameNames(["1"]), "The streaming source is not configured (set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET)."]
            ]
            for (const [effect, expected] of cases) {
              const e = yield* Effect.flip(effect)
              assert.strictEqual(e._tag, "ServiceUnavailable")
              assert.strictEqual(message(e), expected)
            }
            // RSS needs no credentials.
            const url = yield* SandboxUrl
            assert.strictEqual((yield* s.rss(`${url}/sandbox/rss/atom.xml`)).title, "Sandbox Atom Feed")
          })
      ))
  })
})

describe("ExternalSourcesHttp.config", () => {
  const read = (env: Record<string, string>) =>
    ExternalSourcesHttp.config().parse(ConfigProvider.fromEnv({ env }))

  it.effect("a source is configured only when all its variables are set", () =>
    Effect.gen(function*() {
      const none = yield* read({})
      assert.isUndefined(none.streaming)
      assert.isUndefined(none.photo)
      assert.deepStrictEqual(none.rss, { allowPrivateAddresses: false })
      const some = yield* read({
        TWITCH_CLIENT_ID: "id",
        YOUTUBE_API_KEY: "key",
        INSTAGRAM_ACCESS_TOKEN: "token",
        REDDIT_CLIENT_ID: "rid",
        REDDIT_CLIENT_SECRET: "rsecret",
        X_BEARER_TOKEN: ""
      })
      assert.isUndefined(some.streaming)
      assert.isUndefined(some.photo)
      assert.isUndefined(some.microblog)
      assert.strictEqual(Option.map(Option.fromNullishOr(some.video), (v) => Redacted.value(v.apiKey)).pipe(Option.getOrUndefined), "key")
      assert.strictEqual(some.forum?.clientId, "rid")
    }))
})
