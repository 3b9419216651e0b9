/**
 * How every DeliveryStore statement runs: failures follow SqlFailure.ts (down → 503; nothing here
 * stores a client's value, so a refusal is our bug), each call in a `DeliveryStore.<name>` span.
 */
import { Effect, Schema } from "effect"
import { sqlFailure } from "../infra/SqlFailure.ts"

export const db = sqlFailure("The delivery storage")

/** A row this code wrote that does not decode is a bug: a defect, not an outage. */
export const run = <A, E, R>(self: Effect.Effect<A, E | Schema.SchemaError, R>, span: string) =>
  self.pipe(
    Effect.catchIf(Schema.isSchemaError, (e) => Effect.die(e)),
    db,
    Effect.withSpan(`DeliveryStore.${span}`)
  )
