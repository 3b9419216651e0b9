/** The SchemaErrors middleware of the contract: request decoding failures become the 400 envelope. */
import { Context, Effect, Layer } from "effect"
import type { Types } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { BadRequest } from "../../domain/infra/Errors.ts"
import { SchemaErrors } from "../contract/Middleware.ts"
import { mayHoldNulBesidesBody, nullCharacterProblems, schemaProblemsBesides } from "./NullCharacter.ts"
import { schemaErrorProblems } from "./SchemaErrorWording.ts"

/**
 * Request decoding failures → 400 with every problem. U+0000 anywhere in the request is refused here
 * too, before the handler (NullCharacter.ts): it never reaches the database.
 */
export const SchemaErrorsLive = Layer.succeed(SchemaErrors, (httpEffect, { endpoint }) => {
  // Built once per endpoint (this function runs when the routes are built), run per request.
  const handled = Effect.catch(httpEffect, (error): Effect.Effect<never, BadRequest | Types.unhandled> =>
    !HttpApiError.HttpApiSchemaError.is(error)
      ? Effect.fail(error)
      : error.kind === "Body" || error.kind === "ResponseHeaders"
      ? Effect.die(error) // our own answer failed to encode: a bug, logged and answered 500
      : Effect.fail(BadRequest.many(schemaErrorProblems(error))))
  const checked = Effect.flatMap(nullCharacterProblems(endpoint), (nul) =>
    nul.length > 0
      ? Effect.flatMap(
        schemaProblemsBesides(endpoint, nul, schemaErrorProblems),
        (others) => Effect.fail(BadRequest.many([...nul, ...others]))
      )
      : handled)
  if (endpoint.payload.size > 0) return checked
  // No body to read: a request with no U+0000 in its URL, cookies or headers (every cached read)
  // goes straight to the handler; one that may hold one takes the whole check above.
  return Effect.withFiber((fiber) =>
    mayHoldNulBesidesBody(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)) ? checked : handled
  )
})
