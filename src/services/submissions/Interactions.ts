/**
 * What the interactions endpoint (http/submissions/InteractionsRoute.ts) needs: the public key of
 * an application, whether an interaction id is new, and the answer to a verified interaction.
 * Layer: layers/submissions/InteractionsLive.ts; memory: test/submissions/InteractionsMemory.ts.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Interaction, InteractionAnswer } from "./Interaction.ts"

export class Interactions extends Context.Service<Interactions, {
  /**
   * The hex `verify_key` of the registered bot whose application this is; undefined for none. May be
   * kept a while: `fresh` reads the stored one (after a signature the kept key refused).
   */
  readonly publicKeyOf: (applicationId: string, fresh?: boolean) => Effect.Effect<string | undefined, ServiceUnavailable>
  /** True the first time an interaction id is seen, false after (a replay changes nothing). */
  readonly firstSeen: (interactionId: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** The answer to a verified, first-seen interaction that is not a PING. */
  readonly handle: (interaction: Interaction) => Effect.Effect<InteractionAnswer, ServiceUnavailable>
}>()("gateway/Interactions") {}
