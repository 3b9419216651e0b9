/**
 * What the *Poll.test.ts files of the forum, video, microblog and photo connectors share: the
 * poller's options pointed at the fake platform APIs of a PollServer, a result's items, and a poll's failure.
 */
import { Effect, Redacted } from "effect"
import type { SourcePollerHttpOptions } from "../../../src/layers/sources/poll/SourcePollerHttp.ts"
import { emptyPollState, type PollResult, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"

const secret = Redacted.make("s3cret")
/** The four platforms' credentials and base URLs, at the PollServer of `url`. */
export const platformOptions = (url: string): SourcePollerHttpOptions => ({
  forum: { clientId: "cid", clientSecret: secret, apiUrl: `${url}/reddit-api`, authUrl: `${url}/reddit`, siteUrl: "https://www.reddit.com" },
  video: { apiKey: Redacted.make("yt-key"), baseUrl: `${url}/yt` },
  microblog: { bearerToken: Redacted.make("x-token"), baseUrl: `${url}/x` },
  photo: { accessToken: Redacted.make("ig-token"), userId: "900", baseUrl: `${url}/ig` }
})
export const items = (r: PollResult) => (r._tag === "Items" ? r.items : [])
export const flip = (module: "forum" | "video" | "microblog" | "photo", identifier: string) =>
  SourcePoller.use((p) => Effect.flip(p.poll(module, identifier, emptyPollState)))
