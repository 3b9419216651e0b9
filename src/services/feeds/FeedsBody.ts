/**
 * A feed write's body as its schema judged it (decoded by the handler exactly as the framework would:
 * http/edge/RawBody.ts), and what of a refused body the other checks still run on. decisions.md "Errors":
 * one 400 lists every problem — the schema's, the rule across fields, the source's and the webhook's.
 * A field that fails its schema is left out of its own checks only: every field, and every option,
 * that passes its own schema is still checked against the source and the chat platform.
 */
import { Result, Schema } from "effect"
import type { Problem } from "../../domain/infra/Errors.ts"
import { FeedModules, MODULE_OPTIONS, WEBHOOK_REQUIRED } from "../../domain/feeds/Feed.ts"
import type { FeedCreate, WebhookOptionsInput } from "../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"

/** A body its schema refused: the body as sent, and every problem the schema found in it. */
export interface Refused {
  readonly body: unknown
  readonly problems: ReadonlyArray<Problem>
}

/** A write's body: decoded by its schema, or refused by it. */
export type Judged<A> = Result.Result<A, Refused>

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** An own key only: a body's `__proto__` or `constructor` is data, never the prototype's. */
const field = (body: Readonly<Record<string, unknown>>, key: string): unknown => Object.hasOwn(body, key) ? body[key] : undefined

type Decoder = (value: unknown) => Result.Result<unknown, unknown>

/** Per module, each option with the rule a request's value must pass (a list also refuses repeats). */
const optionDecoders = Object.fromEntries(
  Object.entries(MODULE_OPTIONS).map(([m, options]) => [
    m,
    Object.entries(options).map(([key, spec]) =>
      [key, Schema.decodeUnknownResult(("request" in spec ? spec.request : spec.schema) as Schema.Decoder<unknown>) as Decoder] as const
    )
  ])
) as unknown as Record<FeedModuleName, ReadonlyArray<readonly [string, Decoder]>>

/**
 * The options of `value` that pass their own rule, decoded (any subset of module `m`'s options);
 * undefined when `value` is not an object. Unknown keys are left out: the schema named them.
 */
export const wellFormedOptions = <M extends FeedModuleName>(m: M, value: unknown): WebhookOptionsInput<M> | undefined => {
  if (!isRecord(value)) return undefined
  const options: Record<string, unknown> = {}
  for (const [key, decode] of optionDecoders[m]) {
    if (!Object.hasOwn(value, key)) continue
    const r = decode(value[key])
    if (Result.isSuccess(r)) options[key] = r.success
  }
  // The cast: the keys and values are those of MODULE_OPTIONS[m], module m's options.
  return options as WebhookOptionsInput<M>
}

const TARGETS = ["feed_identifier", "webhook_channel", "webhook_url"] as const
/** One decoder per top-level field of a create (the same for every module). */
const createDecoders = TARGETS.map((key) =>
  [key, Schema.decodeUnknownResult(Schema.Struct({ [key]: FeedModules.rss.create.fields[key] }))] as const
)

/**
 * What a create's checks run on when its schema refused the body: the fields that pass their own
 * schema, and the schema's problems with the rule across fields, which the schema only gets to when
 * every field passed (no `webhook_channel` and no `webhook_url`: a 400 at `webhook_channel`).
 */
export const refusedCreate = <M extends FeedModuleName>(m: M, refused: Refused) => {
  const body = refused.body
  const parts: { -readonly [K in keyof FeedCreate<M>]?: FeedCreate<M>[K] } = {}
  const problems = [...refused.problems]
  if (!isRecord(body)) return { parts, problems }
  for (const [key, decode] of createDecoders) {
    if (!Object.hasOwn(body, key)) continue
    const r = decode({ [key]: body[key] })
    if (Result.isSuccess(r)) parts[key] = (r.success as Record<string, string>)[key]
  }
  const options = wellFormedOptions(m, field(body, "webhook_options"))
  if (options !== undefined) parts.webhook_options = options
  const noTarget = !Object.hasOwn(body, "webhook_channel") && !Object.hasOwn(body, "webhook_url")
  if (noTarget && !problems.some((p) => p.additionalProperties?.["path"] === "webhook_channel")) {
    problems.push({ message: `webhook_channel: ${WEBHOOK_REQUIRED}`, additionalProperties: { path: "webhook_channel", in: "payload" } })
  }
  return { parts, problems }
}

/** What a PATCH's checks run on when its schema refused the body: the options that pass their own rule. */
export const refusedUpdate = <M extends FeedModuleName>(m: M, refused: Refused) => ({
  options: isRecord(refused.body) ? wellFormedOptions(m, field(refused.body, "webhook_options")) : undefined,
  problems: refused.problems
})
