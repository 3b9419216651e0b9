/** The forms runtime's settings: FORM_DRAFT_TTL_MINUTES (default 30, forms-runtime.md §3). */
import { Context, Layer } from "effect"

export class SubmissionsSettings extends Context.Service<SubmissionsSettings, {
  /** How long a draft lives after its last saved page. */
  readonly draftTtlMinutes: number
}>()("gateway/SubmissionsSettings") {
  static readonly defaults = { draftTtlMinutes: 30 }
  static readonly layerDefaults = Layer.succeed(SubmissionsSettings, SubmissionsSettings.defaults)
}
