/**
 * One reader (delivery.md §10): the feed-creation check (ExternalSources' rss, layers/sources/Rss.ts)
 * and the poller read a feed the same way, over real HTTP, on real feeds from public collections
 * (test/fixtures/feeds/, test/fixtures/feeds/feedparser/): every well-formed feedparser feed is
 * accepted at creation, and on every fixture creation accepts exactly when the poller reads it,
 * refusing in the poller's words.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { readdirSync } from "node:fs"
import { makeRss } from "../../src/layers/sources/Rss.ts"
import { emptyPollState, SourcePoller } from "../../src/services/sources/SourcePoller.ts"
import { fixture, pollServerForFile, serve, withPoller } from "./poll/PollServerFixtures.ts"

const server = pollServerForFile()
const dir = (sub: string) => readdirSync(new URL(`../fixtures/feeds/${sub}`, import.meta.url)).filter((f) => f.endsWith(".xml"))
const WELLFORMED = dir("feedparser/wellformed").map((f) => `feedparser/wellformed/${f}`)
const ALL = [...dir(""), ...WELLFORMED, ...dir("feedparser/illformed").map((f) => `feedparser/illformed/${f}`)]

/** The creation check, as ExternalSourcesHttp builds it (loopback allowed for the test server). */
const create = (url: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const rss = makeRss({ client, source: "rss", service: "RSS", timeout: "5 seconds" }, { allowPrivateAddresses: true })
    return yield* Effect.result(rss.rss(url))
  }).pipe(Effect.provide(FetchHttpClient.layer))

const poll = (url: string) => withPoller({}, Effect.result(SourcePoller.use((p) => p.poll("rss", url, emptyPollState))))

describe("one reader", () => {
  it("there are fixtures to read", () => {
    assert.isAtLeast(WELLFORMED.length, 8)
    assert.isAtLeast(ALL.length, 30)
  })

  it.live("every well-formed feedparser feed is accepted at creation", () =>
    Effect.gen(function*() {
      for (const name of WELLFORMED) {
        server.routes.set(`/${name}`, serve(fixture(name), { "content-type": "application/xml" }))
        const r = yield* create(`${server.url}/${name}`)
        assert.isTrue(Result.isSuccess(r), `${name}: ${Result.isFailure(r) ? JSON.stringify(r.failure.problems) : ""}`)
      }
    }))

  it.live("on every fixture creation agrees with polling, and refuses in the reader's words", () =>
    Effect.gen(function*() {
      for (const name of ALL) {
        server.routes.set(`/${name}`, serve(fixture(name), { "content-type": "application/xml" }))
        const url = `${server.url}/${name}`
        const created = yield* create(url)
        const polled = yield* poll(url)
        assert.strictEqual(Result.isSuccess(created), Result.isSuccess(polled), `${name}: creation and polling disagree`)
        if (Result.isFailure(created) && Result.isFailure(polled)) {
          assert.strictEqual(created.failure.problems[0]?.message, `The feed at ${url} is something, not an RSS or Atom feed.`, name)
          assert.include(polled.failure.message, "not an RSS or Atom feed", name)
        }
      }
    }))

  it.live("a blank line before <?xml is accepted at creation (delivery.md §1 \"Reading\")", () =>
    Effect.gen(function*() {
      server.routes.set("/blank.xml", serve(`\n\n<?xml version="1.0"?>\n<rss version="2.0"><channel><title>Blank</title></channel></rss>`))
      const r = yield* create(`${server.url}/blank.xml`)
      assert.deepStrictEqual(r, Result.succeed({ url: `${server.url}/blank.xml`, title: "Blank" }))
    }))
})
