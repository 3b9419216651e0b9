/**
 * The polling backstop of pushed sources (delivery.md §9): a source whose every push subscription
 * is active (within its lease) is still polled, every 30 minutes (PushSettings.backstopSeconds),
 * unless its module's own interval is longer. DeliveryScheduling asks this when it plans a
 * source's next slot; without it (push off) every source keeps its module's interval.
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { PushSettings } from "./PushSettings.ts"
import { PushStore } from "./PushStore.ts"

const PUSHABLE = new Set(["video", "streaming"])

export class PushBackstop extends Context.Service<PushBackstop, {
  /** The interval of the source's polls (seconds): `interval` (its module's), or the backstop's while it is pushed. */
  readonly intervalOf: (source: { readonly id: string; readonly module: string }, interval: number) => Effect.Effect<number, ServiceUnavailable>
}>()("gateway/PushBackstop") {
  /** Needs PushStore and PushSettings. */
  static readonly layer = Layer.effect(PushBackstop, Effect.gen(function*() {
    const store = yield* PushStore
    const settings = yield* PushSettings
    return PushBackstop.of({
      intervalOf: (source, interval) =>
        !PUSHABLE.has(source.module) || interval >= settings.backstopSeconds
          ? Effect.succeed(interval)
          : Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(store.pushed(source.id, new Date(now)), (pushed) => (pushed ? settings.backstopSeconds : interval)))
    })
  }))
}
