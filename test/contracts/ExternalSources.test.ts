/**
 * The ExternalSources contract on every layer: the live clients against the sandbox twins served on
 * a loopback port, and the memory layer over the same seed.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { ExternalSourcesHttp } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ATOM_TITLE, RSS_PATHS, RSS_TITLE } from "../../src/sandbox/sources/Seed.ts"
import { ExternalSourcesMemory, MEMORY_ORIGIN } from "../layers/ExternalSourcesMemory.ts"
import { externalSourcesContract, type ExternalSourcesFixture } from "./ExternalSources.contract.ts"

// Written out rather than derived from the seed, so a wrong rule in either layer shows.
const fixture: Omit<ExternalSourcesFixture<never>, "origin"> = {
  users: [
    {
      module: "streaming",
      inputs: ["sandboxstreamer", "@SandboxStreamer", " SANDBOXSTREAMER ", "41000001"],
      user: { id: "41000001", userName: "sandboxstreamer", displayName: "SandboxStreamer", url: "https://www.twitch.tv/sandboxstreamer" }
    },
    {
      module: "video",
      inputs: ["UCsandbox000000000000001", "@SandboxChannel", "Sandbox Channel"],
      user: { id: "UCsandbox000000000000001", userName: "@sandboxchannel", displayName: "Sandbox Channel", url: "https://www.youtube.com/@sandboxchannel" }
    },
    {
      module: "video",
      inputs: ["UCsandbox000000000000002", "sandbox cooking"],
      user: {
        id: "UCsandbox000000000000002",
        userName: "UCsandbox000000000000002",
        displayName: "Sandbox Cooking",
        url: "https://www.youtube.com/channel/UCsandbox000000000000002"
      }
    },
    {
      module: "microblog",
      inputs: ["sandboxbird", "@SandboxBird", "1500000000000000001"],
      user: { id: "1500000000000000001", userName: "sandboxbird", displayName: "Sandbox Bird", url: "https://x.com/sandboxbird" }
    },
    {
      module: "photo",
      inputs: ["sandboxphotos", "@SandboxPhotos", "17841400000000101"],
      user: { id: "17841400000000101", userName: "sandboxphotos", displayName: "Sandbox Photos", url: "https://www.instagram.com/sandboxphotos/" }
    },
    {
      module: "photo",
      inputs: ["sandbox.travel", "17841400000000102"],
      user: { id: "17841400000000102", userName: "sandbox.travel", displayName: "sandbox.travel", url: "https://www.instagram.com/sandbox.travel/" }
    }
  ],
  unknownUsers: [
    { module: "streaming", input: "nobody_here" },
    { module: "streaming", input: "bad name!" },
    { module: "video", input: "UCsandbox0000000000000099" },
    { module: "video", input: "@nobodyhere" },
    { module: "video", input: "Nothing Like This" },
    { module: "microblog", input: "nobody" },
    { module: "microblog", input: "not a name" },
    { module: "photo", input: "nobody" },
    { module: "photo", input: "12345" }
  ],
  games: [
    { inputs: ["Minecraft", "minecraft", "27471"], game: { id: "27471", name: "Minecraft" } },
    { inputs: ["just chatting", "509658"], game: { id: "509658", name: "Just Chatting" } }
  ],
  unknownGame: "No Such Game",
  gameNames: { ids: ["509658", "999", "27471"], names: ["Just Chatting", "Minecraft"] },
  forums: [
    { inputs: ["SandboxGaming", "sandboxgaming"], forum: { name: "SandboxGaming", flairs: ["Discussion", "News", "Meme"] } },
    { inputs: ["r/sandboxnews", "/r/SandboxNews/"], forum: { name: "SandboxNews", flairs: ["World", "Tech"] } },
    { inputs: ["SandboxNoFlair"], forum: { name: "SandboxNoFlair", flairs: [] } }
  ],
  unknownForums: ["NothingHere", "SandboxPrivate", "bad name!"],
  feeds: [{ path: RSS_PATHS.rss, title: RSS_TITLE }, { path: RSS_PATHS.atom, title: ATOM_TITLE }],
  notAFeed: RSS_PATHS.notAFeed,
  missingFeed: "/sandbox/rss/missing.xml"
}

/** The live clients pointed at a sandbox of their own, on a free loopback port. */
const Http = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  return ExternalSourcesHttp.layer(SandboxMode.sourcesOptions(sandbox.url, "5 seconds"))
})).pipe(Layer.provideMerge(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))

externalSourcesContract("ExternalSourcesHttp against the sandbox twins", Http, {
  ...fixture,
  origin: Effect.map(SandboxServer, (s) => s.url)
})

externalSourcesContract("ExternalSourcesMemory", ExternalSourcesMemory, { ...fixture, origin: Effect.succeed(MEMORY_ORIGIN) })
