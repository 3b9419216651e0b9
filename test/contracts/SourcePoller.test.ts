/**
 * The SourcePoller contract on every layer: the live poller against the sandbox twins served on a
 * loopback port (as sandbox mode points it), and the memory layer seeded with what the twins serve.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { SourcePollerHttp } from "../../src/layers/sources/poll/SourcePollerHttp.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { forum, rss } from "../delivery/ItemFixtures.ts"
import { MEMORY_ORIGIN } from "../layers/ExternalSourcesMemory.ts"
import { SourcePollerMemory, SourcesControl } from "../layers/SourcePollerMemory.ts"
import { call, field } from "../sandbox/SandboxCallFixtures.ts"
import { sourcePollerContract, type SourcePollerFixture } from "./SourcePoller.contract.ts"

// Written out rather than derived from the seed, so a wrong rule in either layer shows.
const fixture: Omit<SourcePollerFixture<never>, "origin" | "publish"> = {
  sources: [
    { module: "rss", identifier: (o) => `${o}/sandbox/rss/news.xml`, ids: ["sandbox-rss-2", "sandbox-rss-1"], unchanged: "NotModified" },
    { module: "forum", identifier: () => "SandboxGaming", ids: [], unchanged: "NotModified" },
    { module: "streaming", identifier: () => "41000001", ids: [], unchanged: "NotModified" },
    { module: "microblog", identifier: () => "1500000000000000001", ids: [], unchanged: "NotModified" },
    { module: "photo", identifier: () => "17841400000000101", ids: [], unchanged: "NotModified" }
  ],
  missing: [
    { module: "rss", identifier: (o) => `${o}/sandbox/rss/missing.xml` },
    { module: "forum", identifier: () => "NothingHere" },
    { module: "microblog", identifier: () => "1500000000000000999" }
  ],
  newFeed: (o) => `${o}/sandbox/rss/contract-feed.xml`,
  forum: "SandboxNews"
}

/** The live poller pointed at a sandbox of its own, on a free loopback port. */
const Http = Layer.unwrap(Effect.map(SandboxServer, (sandbox) =>
  SourcePollerHttp.layer({
    ...SourcePollerHttp.fromExternalSources(SandboxMode.sourcesOptions(sandbox.url, "5 seconds")),
    timeout: "5 seconds"
  }))).pipe(Layer.provide(FetchHttpClient.layer), Layer.provideMerge(SandboxServer.layer()))

sourcePollerContract("SourcePollerHttp against the sandbox twins", Http, {
  ...fixture,
  origin: Effect.map(SandboxServer, (s) => s.url),
  publish: (module, identifier, post) =>
    Effect.gen(function*() {
      const answer = yield* call(`/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "post", id: post.id, title: post.title, url: `https://news.test/${post.id}`, text: "Body" })
      })
      if (answer.status !== 201) return yield* Effect.die(new Error(`publish refused: ${answer.status} ${JSON.stringify(answer.body)}`))
      return { id: String(field(answer.body, "id")), url: String(field(answer.body, "url")) }
    })
})

// The memory layer holds what the twins serve at the start (the seed's two rss items; the others empty).
const seed = [
  { module: "rss", identifier: `${MEMORY_ORIGIN}/sandbox/rss/news.xml`, items: [rss({ id: "sandbox-rss-2" }), rss({ id: "sandbox-rss-1" })] },
  { module: "forum", identifier: "SandboxGaming", items: [] },
  { module: "forum", identifier: "SandboxNews", items: [] },
  { module: "streaming", identifier: "41000001", items: [] },
  { module: "microblog", identifier: "1500000000000000001", items: [] },
  { module: "photo", identifier: "17841400000000101", items: [] }
] as const

sourcePollerContract("SourcePollerMemory", SourcePollerMemory(seed), {
  ...fixture,
  origin: Effect.succeed(MEMORY_ORIGIN),
  publish: (module, identifier, post) =>
    Effect.gen(function*() {
      const item = module === "rss"
        ? rss({ id: post.id, title: post.title, url: `https://news.test/${post.id}` })
        : forum({ id: `t3_${post.id}`, title: post.title, url: `https://www.reddit.com/r/${identifier}/comments/${post.id}/` })
      yield* SourcesControl.use((c) => c.publish(module, identifier, item))
      return { id: item.id, url: item.url }
    })
})
