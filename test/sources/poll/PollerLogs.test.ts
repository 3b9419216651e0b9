/**
 * What the poller logs of a failed poll: a connector defect is logged with its cause, and neither the
 * cause nor the annotated identifier shows a secret of the feed URL (a token in its path or query).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { HttpClient } from "effect/http"
import { SourcePollerHttp } from "../../../src/layers/sources/poll/SourcePollerHttp.ts"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"

const SECRET = "s3cr3tT0kenAbcdefghijklmnopqrstuvwxyz0123"
const FEED = `http://127.0.0.1:9/webhooks/1/${SECRET}/feed.xml?key=${SECRET}`

describe("poller logs", () => {
  it.live("a connector defect is logged without the secrets of the feed URL", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.layer([Logger.make((o) => {
        lines.push(JSON.stringify({ message: o.message, annotations: o.fiber.getRef(References.CurrentLogAnnotations) }))
      })])
      // An HTTP client that crashes, quoting the URL it was given (as a library bug might).
      const crashing = Layer.succeed(HttpClient.HttpClient, HttpClient.make((request) => Effect.die(new Error(`crashed on ${request.url}`))))
      const poller = SourcePollerHttp.layer({ timeout: "2 seconds", rss: { allowPrivateAddresses: true } }).pipe(Layer.provide(crashing))
      const failure = yield* SourcePoller.use((p) => Effect.flip(p.poll("rss", FEED, emptyPollState))).pipe(
        Effect.provide(Layer.merge(poller, capture))
      )
      assert.strictEqual(failure._tag, "PollFailed")
      const logged = lines.join("\n")
      assert.include(logged, "source connector defect")
      assert.include(logged, "crashed on")
      assert.notInclude(logged, SECRET)
    }))
})
