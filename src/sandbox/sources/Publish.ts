/**
 * `POST /sandbox/sources/:module/:identifier/events` (delivery.md §7): publishes one event at a
 * sandbox source, which its twin then serves like the real API. `:identifier` is the source as
 * `GET /sandbox` lists it (URL-encoded) or its platform id; for rss the feed's short name (`news`
 * for `…/sandbox/rss/news.xml`), and a new short name creates that feed. Answers 201 with the
 * stored event; problems come in the gateway's error envelope (400 bad body, 404 unknown source or
 * video, 409 an id already used or a stream that is not live). A control route: never counted nor
 * faulted.
 */
import { Clock, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { reasonPhrase } from "../../domain/infra/Errors.ts"
import { sandboxOrigin } from "../Origin.ts"
import type { BodyProblem, EventBody } from "./PublishBody.ts"
import { parseEventBody } from "./PublishBody.ts"
import { publishStreaming, publishVideo } from "./PublishChannels.ts"
import type { Outcome, Problem } from "./PublishOutcome.ts"
import { publishForum, publishMicroblog, publishPhoto, publishRss } from "./PublishPosts.ts"
import type { SandboxModule, SourceStore } from "./Store.ts"
import { SANDBOX_MODULES, SourceState } from "./Store.ts"

export const PUBLISH_PATH = "/sandbox/sources/:module/:identifier/events"

const envelope = (status: number, problems: ReadonlyArray<Problem>) =>
  HttpServerResponse.jsonUnsafe(
    {
      errors: problems.map((p) => ({
        code: reasonPhrase[status] ?? (status === 409 ? "Conflict" : "Error"),
        message: p.message,
        ...(p.path === undefined ? {} : { additionalProperties: { path: p.path } })
      }))
    },
    { status }
  )

const publish = (store: SourceStore, module: SandboxModule, identifier: string, base: string, b: EventBody, now: number): Outcome => {
  switch (module) {
    case "rss":
      return publishRss(store, identifier, base, b, now)
    case "forum":
      return publishForum(store, identifier, b, now)
    case "streaming":
      return publishStreaming(store, identifier, b, now)
    case "video":
      return publishVideo(store, identifier, b, now)
    case "microblog":
      return publishMicroblog(store, identifier, b, now)
    case "photo":
      return publishPhoto(store, identifier, b, now)
  }
}

const decoded = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const handler = Effect.gen(function*() {
  const store = yield* SourceState
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = yield* HttpRouter.params
  const module = params["module"] ?? ""
  if (!(SANDBOX_MODULES as ReadonlyArray<string>).includes(module)) {
    return envelope(404, [{ message: `no sandbox source module "${module}" (${SANDBOX_MODULES.join(", ")})` }])
  }
  const raw = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    return envelope(400, [{ message: "the body must be JSON, e.g. {\"type\":\"post\",\"title\":\"Hello\"}", path: "" }])
  }
  const parsed = parseEventBody(module as SandboxModule, json)
  if ("problems" in parsed) return envelope(400, parsed.problems.map((p: BodyProblem) => ({ message: p.message, path: p.path })))
  const outcome = publish(
    store,
    module as SandboxModule,
    decoded((params["identifier"] ?? "").trim()),
    yield* sandboxOrigin(store.publicOrigin),
    parsed.body,
    yield* Clock.currentTimeMillis
  )
  return outcome.status === 201 ? HttpServerResponse.jsonUnsafe(outcome.event, { status: 201 }) : envelope(outcome.status, outcome.problems)
})

/** The publish route (needs SourceState; Sandbox.ts provides it with the twins'). */
export const PublishRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const store = yield* SourceState
    yield* router.add("POST", PUBLISH_PATH, Effect.provideService(handler, SourceState, store))
  })
)
