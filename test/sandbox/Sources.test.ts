/**
 * The external-source twins themselves: every entry of SOURCES_LISTING resolves through the live
 * clients, and each twin refuses a request without credentials the way its real API does.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { ExternalSourcesHttp } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { SOURCES_LISTING, sourcesListing } from "../../src/sandbox/sources/Seed.ts"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"
import { SandboxServer, SandboxUrl } from "../sources/SandboxServerFixtures.ts"

const Env = Layer.unwrap(Effect.gen(function*() {
  const url = yield* SandboxUrl
  return ExternalSourcesHttp.layer(SandboxMode.sourcesOptions(url, "2 seconds"))
})).pipe(Layer.provideMerge(SandboxServer))

const status = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(request)
    return response.status
  })

layer(Env, { excludeTestServices: true })("sandbox source twins", (it) => {
  it.effect("every listed user, channel, game, forum and feed resolves through the live clients", () =>
    Effect.gen(function*() {
      const s = yield* ExternalSources
      const url = yield* SandboxUrl
      for (const name of SOURCES_LISTING.streaming) assert.strictEqual((yield* s.lookupUser("streaming", name)).userName, name)
      for (const name of SOURCES_LISTING.microblog) assert.strictEqual((yield* s.lookupUser("microblog", name)).userName, name)
      for (const name of SOURCES_LISTING.photo) assert.strictEqual((yield* s.lookupUser("photo", name)).userName, name)
      for (const id of SOURCES_LISTING.video) assert.strictEqual((yield* s.lookupUser("video", id)).id, id)
      for (const name of SOURCES_LISTING.games) assert.strictEqual((yield* s.lookupGame(name)).name, name)
      for (const name of SOURCES_LISTING.forum) assert.strictEqual((yield* s.forum(name)).name, name)
      for (const feed of sourcesListing(url).rss) assert.isNotEmpty((yield* s.rss(feed)).title)
    }))

  it.effect("each twin refuses a request without credentials", () =>
    Effect.gen(function*() {
      const url = yield* SandboxUrl
      const get = (path: string) => HttpClientRequest.get(`${url}${path}`)
      assert.strictEqual(yield* status(get("/sandbox/streaming/helix/users?login=sandboxstreamer")), 401)
      assert.strictEqual(
        yield* status(get("/sandbox/streaming/helix/users?login=sandboxstreamer").pipe(HttpClientRequest.bearerToken("x"))),
        401,
        "Client-Id is required too"
      )
      assert.strictEqual(yield* status(get("/sandbox/video/youtube/v3/channels?part=snippet&id=UCsandbox000000000000001")), 403)
      assert.strictEqual(yield* status(get("/sandbox/microblog/2/users/by/username/sandboxbird")), 401)
      assert.strictEqual(yield* status(get("/sandbox/photo/17841400000000101?fields=id,username")), 400)
      assert.strictEqual(yield* status(get("/sandbox/forum/r/SandboxGaming/about")), 401)
      assert.strictEqual(yield* status(HttpClientRequest.post(`${url}/sandbox/forum/api/v1/access_token`)), 401)
      assert.strictEqual(yield* status(get("/sandbox/taskboard/1/organizations/sandbox-team-1/boards")), 401)
      assert.strictEqual(yield* status(get("/sandbox/taskboard/1/organizations/sandbox-team-1/boards?key=k&token=t")), 200)
    }))

  it.effect("the feeds are served with feed content types; the non-feed page is HTML", () =>
    Effect.gen(function*() {
      const url = yield* SandboxUrl
      const client = yield* HttpClient.HttpClient
      const rss = yield* client.get(`${url}/sandbox/rss/news.xml`)
      assert.include(rss.headers["content-type"] ?? "", "application/rss+xml")
      const atom = yield* client.get(`${url}/sandbox/rss/atom.xml`)
      assert.include(atom.headers["content-type"] ?? "", "application/atom+xml")
      const html = yield* client.get(`${url}/sandbox/rss/not-a-feed.html`)
      assert.include(html.headers["content-type"] ?? "", "text/html")
    }))
})
