/**
 * The ExternalSources contract: what the feeds rules rely on from the sources, whichever layer
 * provides them (the live clients against the sandbox twins, the memory layer): who is found by
 * which input and what comes back, NotFound for what does not exist, BadRequest for a URL that is
 * not a feed. Outages (time-outs, 5xx, refused credentials) belong to the live clients' own tests.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import type { LookupModule } from "../../src/domain/feeds/Feed.ts"
import type { ExternalGame, ExternalUser, ForumInfo } from "../../src/services/sources/ExternalSources.ts"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"

export interface ExternalSourcesFixture<R> {
  /** Users the sources hold, each with the inputs a caller may find them by. */
  readonly users: ReadonlyArray<{ readonly module: LookupModule; readonly inputs: ReadonlyArray<string>; readonly user: ExternalUser }>
  /** Inputs that find nobody (unknown or malformed). */
  readonly unknownUsers: ReadonlyArray<{ readonly module: LookupModule; readonly input: string }>
  readonly games: ReadonlyArray<{ readonly inputs: ReadonlyArray<string>; readonly game: ExternalGame }>
  readonly unknownGame: string
  /** `gameNames(ids)` keeps the order and drops unknown ids. */
  readonly gameNames: { readonly ids: ReadonlyArray<string>; readonly names: ReadonlyArray<string> }
  readonly forums: ReadonlyArray<{ readonly inputs: ReadonlyArray<string>; readonly forum: ForumInfo }>
  /** Unknown, private or malformed. */
  readonly unknownForums: ReadonlyArray<string>
  /** Where the feeds are served (known once the layer runs: the sandbox's port). */
  readonly origin: Effect.Effect<string, never, R>
  /** Paths under `origin`. */
  readonly feeds: ReadonlyArray<{ readonly path: string; readonly title: string }>
  readonly notAFeed: string
  readonly missingFeed: string
}

export const externalSourcesContract = <R, E>(
  name: string,
  sourcesLayer: Layer.Layer<ExternalSources | R, E>,
  fixture: ExternalSourcesFixture<R>
) =>
  layer(sourcesLayer, { excludeTestServices: true })(`ExternalSources contract (${name})`, (it) => {
    it.effect("every user is found by each input a caller may give, with the same answer", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        for (const { inputs, module, user } of fixture.users) {
          for (const input of inputs) assert.deepStrictEqual(yield* sources.lookupUser(module, input), user, `${module} ${input}`)
        }
      }))

    it.effect("an unknown or malformed user is NotFound", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        for (const { input, module } of fixture.unknownUsers) {
          assert.strictEqual((yield* Effect.flip(sources.lookupUser(module, input)))._tag, "NotFound", `${module} ${input}`)
        }
      }))

    it.effect("games by name (any case) and by id; an unknown game is NotFound", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        for (const { game, inputs } of fixture.games) {
          for (const input of inputs) assert.deepStrictEqual(yield* sources.lookupGame(input), game, input)
        }
        assert.strictEqual((yield* Effect.flip(sources.lookupGame(fixture.unknownGame)))._tag, "NotFound")
      }))

    it.effect("game names keep the order of the ids and leave unknown ids out", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        assert.deepStrictEqual(yield* sources.gameNames(fixture.gameNames.ids), fixture.gameNames.names)
        assert.deepStrictEqual(yield* sources.gameNames([]), [])
      }))

    it.effect("forums with or without r/, any case: the canonical name and the flairs; others NotFound", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        for (const { forum, inputs } of fixture.forums) {
          for (const input of inputs) assert.deepStrictEqual(yield* sources.forum(input), forum, input)
        }
        for (const input of fixture.unknownForums) {
          assert.strictEqual((yield* Effect.flip(sources.forum(input)))._tag, "NotFound", input)
        }
      }))

    it.effect("feeds are read with their title and the URL normalised", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        const origin = yield* fixture.origin
        for (const { path, title } of fixture.feeds) {
          assert.deepStrictEqual(yield* sources.rss(`${origin}${path}`), { url: `${origin}${path}`, title })
          // Scheme and host in capitals, spaces around: the same feed, the URL as the platform writes it.
          const shouting = ` ${origin.toUpperCase()}${path} `
          assert.strictEqual((yield* sources.rss(shouting)).url, `${origin}${path}`)
        }
      }))

    it.effect("a page that is not a feed, a non-http scheme or a non-URL is BadRequest; a missing feed NotFound", () =>
      Effect.gen(function*() {
        const sources = yield* ExternalSources
        const origin = yield* fixture.origin
        assert.strictEqual((yield* Effect.flip(sources.rss(`${origin}${fixture.notAFeed}`)))._tag, "BadRequest")
        for (const bad of ["ftp://example.com/feed.xml", "file:///etc/passwd", "javascript:alert(1)", "not a url"]) {
          assert.strictEqual((yield* Effect.flip(sources.rss(bad)))._tag, "BadRequest", bad)
        }
        assert.strictEqual((yield* Effect.flip(sources.rss(`${origin}${fixture.missingFeed}`)))._tag, "NotFound")
      }))
  })
