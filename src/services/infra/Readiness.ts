/**
 * Whether the gateway can serve: its storage answers. Layers: ReadinessSql
 * (src/layers/infra/ReadinessSql.ts), ReadinessMemory (test/layers, always ready).
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<void, ServiceUnavailable>
}>()("gateway/Readiness") {}
