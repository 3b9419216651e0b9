/**
 * `POST /interactions/{appClientId}` (forms-runtime.md §1): the platform's HTTP interactions. Outside
 * the HttpApi (the signature is over the exact bytes of the body, which the API would parse first)
 * and outside its rate limits and authorization (the callers are the platform's servers). Every
 * request is verified before anything else happens: unsigned, forged, stale or for an unknown bot →
 * 401 in the envelope. A body over 1 MiB → 413. PING → PONG. An id seen before changes nothing.
 * Answers come well within the platform's 3 s: the handler never calls the platform (jobs do),
 * and past DEADLINE_MS the member is told to try again.
 */
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { ephemeral, Interaction, InteractionType, PONG } from "../../services/submissions/Interaction.ts"
import type { InteractionAnswer } from "../../services/submissions/Interaction.ts"
import { headerProblem, signatureProblem } from "../../services/submissions/InteractionSignature.ts"
import { Interactions } from "../../services/submissions/Interactions.ts"
import { withDeadline } from "../edge/Deadline.ts"
import { envelope } from "../edge/Envelope.ts"

const MAX_BODY_BYTES = 1024 * 1024
/** Well within the platform's 3 s, leaving time for the network both ways. */
export const DEADLINE_MS = 2000

const refused = () => envelope(401, "The request is not signed by this application's key.")
const tooLarge = () => envelope(413, "The body is larger than 1 MiB.")
const answerOf = (a: InteractionAnswer) => HttpServerResponse.jsonUnsafe(a)
const busy = () => answerOf(ephemeral("The gateway is busy; try again in a moment."))
const unverifiable = () => envelope(503, "The gateway cannot verify interactions now; try again.", { retry_after: 5 })
const decode = Schema.decodeUnknownOption(Interaction)

const readBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.arrayBuffer.pipe(
    Effect.map((b): Uint8Array | "too large" | "unreadable" => new Uint8Array(b)),
    Effect.catch((e) =>
      Effect.succeed(e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge" ? "too large" as const : "unreadable" as const)
    )
  )

const parse = (body: Uint8Array) => {
  try {
    return decode(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body)))
  } catch {
    return decode(undefined)
  }
}

/** The verified interaction's answer; an outage is the member's "try again", never a platform failure. */
const respond = (interactions: Interactions["Service"], interaction: Interaction) =>
  Effect.gen(function*() {
    if (interaction.type === InteractionType.PING) return answerOf(PONG)
    // The id is recorded by the handler's first statement (a replay: "already handled", nothing done).
    return answerOf(yield* interactions.handle(interaction))
  }).pipe(
    Effect.catchTag("ServiceUnavailable", (_: ServiceUnavailable) =>
      Effect.succeed(answerOf(ephemeral("Something went wrong on our side; try again in a moment."))))
  )

const route = (interactions: Interactions["Service"]) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { appClientId } = yield* HttpRouter.params
    if (appClientId === undefined || !/^[0-9]{1,20}$/.test(appClientId)) return refused()
    if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return tooLarge()
    const body = yield* readBody(request)
    if (body === "too large") return tooLarge()
    if (body === "unreadable") return envelope(400, "The body could not be read.")
    const signed = { signature: request.headers["x-signature-ed25519"], timestamp: request.headers["x-signature-timestamp"], body }
    // Unsigned, malformed or stale: refused before any other work (no read of the bot's key).
    if (headerProblem(signed, Date.now() / 1000) !== undefined) return refused()
    // The key's read and the answer share the deadline: until the request is verified, running out
    // of time is the gateway's failure (503); a member is never answered on an unverified request.
    let verified = false
    const handled = Effect.gen(function*() {
      const key = yield* interactions.publicKeyOf(appClientId)
      if (key === undefined) return refused()
      if (signatureProblem(signed, key, Date.now() / 1000) !== undefined) {
        // The key may be one kept from before a reset: checked again against the stored one.
        const stored = yield* interactions.publicKeyOf(appClientId, true)
        if (stored === undefined || stored === key || signatureProblem(signed, stored, Date.now() / 1000) !== undefined) return refused()
      }
      const interaction = parse(body)
      if (interaction._tag === "None" || interaction.value.application_id !== appClientId) {
        return envelope(400, "The body is not an interaction of this application.")
      }
      verified = true
      return yield* respond(interactions, interaction.value)
    }).pipe(Effect.catchTag("ServiceUnavailable", () => Effect.succeed(unverifiable())))
    return yield* withDeadline(handled, DEADLINE_MS, () => (verified ? busy() : unverifiable()))
  })

/** Needs Interactions. */
export const InteractionsRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const interactions = yield* Interactions
    yield* router.add("POST", "/interactions/:appClientId", route(interactions))
  })
) satisfies Layer.Layer<never, never, HttpRouter.HttpRouter | Interactions>
