/**
 * What the interactions endpoint (http/submissions/InteractionsRoute.ts) needs: the public key of
 * an application, and the answer to a verified interaction (its id recorded: a replay changes
 * nothing). Layer: layers/submissions/InteractionsLive.ts; memory: test/submissions/SubmissionsMemory.ts.
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
  /**
   * The answer to a verified interaction that is not a PING. Its id is recorded with the first
   * statement it runs; an id recorded before is answered "This interaction was already handled."
   * and changes nothing.
   */
  readonly handle: (interaction: Interaction) => Effect.Effect<InteractionAnswer, ServiceUnavailable>
}>()("gateway/Interactions") {}
