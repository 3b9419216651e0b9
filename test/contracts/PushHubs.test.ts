/**
 * The PushHubs contract on every layer: the live client against the sandbox's WebSub hub and
 * EventSub twin served on a loopback port (what the hub holds read from its `GET /sandbox/push`),
 * and the memory layer (read from its state).
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { PushHubsHttp } from "../../src/layers/push/PushHubsHttp.ts"
import { SANDBOX_WEBSUB_HUB } from "../../src/layers/push/PushLive.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { PushHubsMemory, PushHubsMemoryState } from "../layers/PushHubsMemory.ts"
import { pushHubsContract } from "./PushHubs.contract.ts"

/** The live client pointed at a sandbox of its own, on a free loopback port. */
const Http = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  return PushHubsHttp({
    websubHub: `${sandbox.url}${SANDBOX_WEBSUB_HUB}`,
    twitch: SandboxMode.sourcesOptions(sandbox.url, "5 seconds").streaming,
    timeout: "5 seconds"
  })
})).pipe(Layer.provideMerge(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))

interface HubState {
  readonly subscribe_requests: Record<string, number>
  readonly eventsub: ReadonlyArray<{ readonly id: string }>
}
const hubState = SandboxServer.use((sandbox) =>
  Effect.promise(async () => (await (await fetch(`${sandbox.url}/sandbox/push`)).json()) as HubState))

pushHubsContract("PushHubsHttp against the sandbox's hubs", Http, {
  subscribeRequests: (topic) => Effect.map(hubState, (s) => s.subscribe_requests[topic] ?? 0),
  eventsubIds: Effect.map(hubState, (s) => s.eventsub.map((e) => e.id)),
  unconfigured: PushHubsHttp({}).pipe(Layer.provide(FetchHttpClient.layer))
})

pushHubsContract("PushHubsMemory", PushHubsMemory(), {
  subscribeRequests: (topic) =>
    PushHubsMemoryState.use((s) => Effect.succeed(s.websub.filter((r) => r.mode === "subscribe" && r.topic === topic).length)),
  eventsubIds: PushHubsMemoryState.use((s) => Effect.succeed([...s.eventsub.keys()])),
  unconfigured: PushHubsMemory({ websub: false, eventsub: false })
})
