/**
 * The push callbacks (delivery.md §9), outside the HttpApi: `GET|POST /hooks/websub?hook=…` (the
 * WebSub hub's verification of intent and its notifications) and `POST /hooks/eventsub?hook=…`
 * (Twitch EventSub). They are not part of the public contract: the platforms call them in their
 * own protocols (a text/plain challenge, HMACs over the exact bytes of the body, Atom bodies),
 * which an HttpApi endpoint would parse before we could check the signature, and they would only
 * mislead client generators in the OpenAPI document. Every error still comes as the envelope
 * (`envelope` here, and the global middleware for the rest). Each answers within 2 s (it only
 * checks and queues a job; past the deadline: 503, and the platform sends again). The hook id
 * is in the query, so the access log redacts it and the metrics label is `/hooks/<kind>`.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { HookAnswer } from "../../services/push/Push.ts"
import { Push } from "../../services/push/Push.ts"
import { withDeadline } from "../edge/Deadline.ts"
import { envelope } from "../edge/Envelope.ts"

const DEADLINE_MS = 2000

const answer = (a: HookAnswer) => {
  switch (a._tag) {
    case "Challenge":
      return HttpServerResponse.text(a.challenge, { status: 200, contentType: "text/plain" })
    case "Accepted":
      return HttpServerResponse.empty({ status: 204 })
    case "Ignored":
      return HttpServerResponse.jsonUnsafe({ ignored: a.reason })
    case "Forbidden":
      return envelope(403, a.reason)
    case "NotFound":
      return envelope(404, "No such push subscription.")
    case "BadRequest":
      return envelope(400, a.message)
  }
}

const hookOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://hooks").searchParams

/** Runs the check, within the deadline; an outage is a 503 the platform retries. */
const respond = (self: Effect.Effect<HookAnswer, ServiceUnavailable>) =>
  withDeadline(
    self.pipe(
      Effect.map(answer),
      Effect.catchTag("ServiceUnavailable", () => Effect.succeed(envelope(503, "The gateway cannot take the notification now; send it again.", { retry_after: 5 })))
    ),
    DEADLINE_MS,
    () => envelope(503, "The gateway cannot take the notification now; send it again.", { retry_after: 5 })
  )

/** The exact bytes of the body (the signatures are over them), then `f`; unreadable or over 1 MiB: 400. */
const withBody = (request: HttpServerRequest.HttpServerRequest, f: (body: Uint8Array) => Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
  request.arrayBuffer.pipe(
    Effect.map((b) => new Uint8Array(b)),
    Effect.matchEffect({
      onFailure: () => Effect.succeed(envelope(400, "The body could not be read (at most 1 MiB).")),
      onSuccess: f
    })
  )

const withHook = <R>(f: (hookId: string, query: URLSearchParams, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = hookOf(request)
    const hookId = query.get("hook") ?? ""
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(hookId)) return envelope(404, "No such push subscription.")
    return yield* f(hookId, query, request)
  })

const lease = (q: URLSearchParams) => {
  const v = q.get("hub.lease_seconds")
  return v !== null && /^\d{1,9}$/.test(v) ? Number(v) : undefined
}

/** Needs Push. */
export const HookRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const push = yield* Push
    yield* router.add("GET", "/hooks/websub", withHook((hookId, q) =>
      respond(push.websubVerify(hookId, {
        mode: q.get("hub.mode") ?? "",
        topic: q.get("hub.topic") ?? "",
        challenge: q.get("hub.challenge") ?? "",
        leaseSeconds: lease(q)
      }))))
    yield* router.add("POST", "/hooks/websub", withHook((hookId, _q, request) =>
      withBody(request, (b) => respond(push.websubNotify(hookId, request.headers["x-hub-signature"], b)))))
    yield* router.add("POST", "/hooks/eventsub", withHook((hookId, _q, request) =>
      withBody(request, (b) =>
        respond(push.eventsub(hookId, {
          id: request.headers["twitch-eventsub-message-id"],
          timestamp: request.headers["twitch-eventsub-message-timestamp"],
          signature: request.headers["twitch-eventsub-message-signature"],
          type: request.headers["twitch-eventsub-message-type"]
        }, b)))))
  })
) satisfies Layer.Layer<never, never, HttpRouter.HttpRouter | Push>
