/**
 * What the source-events-*.test.ts files share: the sandbox with the gateway's real pollers pointed
 * at its twins (as sandbox mode does), publishing an event at a source, and reading poll results.
 */
import { assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { SourcePollerHttp } from "../../src/layers/sources/poll/SourcePollerHttp.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { PollResult } from "../../src/services/sources/SourcePoller.ts"
import { call } from "./SandboxCallFixtures.ts"

const Poller = Layer.unwrap(Effect.map(SandboxServer, (server) =>
  SourcePollerHttp.layer({
    ...SourcePollerHttp.fromExternalSources(SandboxMode.sourcesOptions(server.url, "5 seconds")),
    timeout: "5 seconds",
    offlineGraceSeconds: 0
  })
)).pipe(Layer.provide(FetchHttpClient.layer))

export const Env = Poller.pipe(Layer.provideMerge(SandboxServer.layer()))

const post = (path: string, body: unknown) =>
  call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
export const publish = (module: string, identifier: string, body: unknown) =>
  post(`/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`, body)

export const items = (r: PollResult): ReadonlyArray<Item> => {
  assert.strictEqual(r._tag, "Items")
  return r._tag === "Items" ? r.items : []
}
export const find = <I extends Item>(list: ReadonlyArray<Item>, id: string) => {
  const found = list.find((i) => i.id === id)
  assert.isDefined(found, `item ${id} in ${JSON.stringify(list.map((i) => i.id))}`)
  return found as I
}

export const secondsAgo = (s: number) => new Date(Math.floor(Date.now() / 1000) * 1000 - s * 1000).toISOString()
