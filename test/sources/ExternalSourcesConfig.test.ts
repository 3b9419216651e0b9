/**
 * The live ExternalSources clients without credentials (each source not configured, named with its
 * variables) against the sandbox twins, and ExternalSourcesHttp.config reading them.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { ExternalSourcesHttp } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import type { SourceError } from "../../src/services/sources/ExternalSources.ts"
import { SandboxUrl } from "./SandboxServerFixtures.ts"
import { Env, message, TIMEOUT, withSources } from "./ExternalSourcesFixtures.ts"

layer(Env, { excludeTestServices: true })("ExternalSourcesHttp against the sandbox twins", (it) => {
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
