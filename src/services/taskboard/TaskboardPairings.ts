/**
 * Which task-board team a server is paired with, and the team's API key and token (encrypted at
 * rest by the layer). Layer: TaskboardPairingsSql (src/layers/taskboard/TaskboardPairingsSql.ts).
 */
import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export interface Pairing {
  readonly teamId: string
  readonly key: Redacted.Redacted<string>
  readonly token: Redacted.Redacted<string>
}

export class TaskboardPairings extends Context.Service<TaskboardPairings, {
  readonly get: (serverId: string) => Effect.Effect<Pairing | undefined, ServiceUnavailable>
  readonly pair: (serverId: string, pairing: Pairing) => Effect.Effect<void, ServiceUnavailable>
  readonly unpair: (serverId: string) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/TaskboardPairings") {}
