/**
 * The live ExternalSources clients of the platforms (Twitch, YouTube, X, Instagram, Reddit) against
 * their sandbox twins over real HTTP: found by name and by id, not found, refused credentials,
 * hanging upstream (time-out), 5xx and 429.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"
import { fault } from "./SandboxServerFixtures.ts"
import { Env, message, withSources } from "./ExternalSourcesFixtures.ts"

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
})
