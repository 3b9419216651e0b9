/** Readiness of the in-memory capabilities: there is nothing to wait for, always ready. */
import { Effect, Layer } from "effect"
import { Readiness } from "../../src/services/infra/Readiness.ts"

export const ReadinessMemory = Layer.succeed(Readiness, Readiness.of({ check: Effect.void }))
