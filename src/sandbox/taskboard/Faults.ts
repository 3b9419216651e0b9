/**
 * Injected faults on the Trello twin's routes (named `"POST /1/cards"`, …) answered as Trello
 * answers: plain-text refusals, Trello's 429 JSON (with the fault's Retry-After, a hint Trello
 * itself never gives), a bare 500. Used by sandboxRoute (SandboxRoute.ts) for those route names.
 */
import { HttpServerResponse } from "effect/http"

/** A twin route's name: a method and a Trello API path. */
export const isTrelloRoute = (routeName: string) => /^[A-Z]+ \/1\//.test(routeName)

const TRELLO_FAULTS = ["400", "401", "403", "404", "429", "500"] as const
export type TrelloFaultKind = typeof TRELLO_FAULTS[number]

/** The fault kinds a Trello answer exists for (the others — hang, slow, cut — are the same everywhere). */
export const isTrelloFault = (kind: string): kind is TrelloFaultKind => (TRELLO_FAULTS as ReadonlyArray<string>).includes(kind)

export const trelloFault = (kind: TrelloFaultKind, retryAfter: number): HttpServerResponse.HttpServerResponse => {
  switch (kind) {
    case "400":
      return HttpServerResponse.text("invalid id", { status: 400 })
    case "401":
      return HttpServerResponse.text("invalid token", { status: 401 })
    case "403":
      return HttpServerResponse.text("unauthorized permission requested", { status: 403 })
    case "404":
      return HttpServerResponse.text("The requested resource was not found.", { status: 404 })
    case "429":
      return HttpServerResponse.jsonUnsafe(
        { error: "API_TOKEN_LIMIT_EXCEEDED", message: "Rate limit exceeded" },
        { status: 429, headers: { "retry-after": String(Math.ceil(retryAfter)) } }
      )
    case "500":
      return HttpServerResponse.text("Internal Server Error", { status: 500 })
  }
}
