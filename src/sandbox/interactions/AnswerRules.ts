/**
 * The platform's rules for an answer to an interaction (Discord's developer documentation,
 * interactions/receiving-and-responding and components/reference, and the callback request schemas of
 * openapi.json): which callback types each interaction takes, each type's body schema, and a modal's
 * limits. Where the two sources differ the stricter holds: a modal has 1 to 5 top-level components
 * (the documentation), not the schema's 40. A message it sends (4) or updates (7) is held to the
 * message rules (MessageRules.ts: flags, embeds' total size, components, allowed mentions). Every
 * problem found is returned, in words.
 */
import { checkSchema } from "../DiscordSchemaCheck.ts"
import { Flags, messageProblems } from "../MessageRules.ts"
import { REQUEST_SCHEMAS } from "./RequestSchemas.ts"

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

export const INTERACTION_NAMES = { 1: "PING", 2: "APPLICATION_COMMAND", 3: "MESSAGE_COMPONENT", 5: "MODAL_SUBMIT" } as const
export type InteractionType = keyof typeof INTERACTION_NAMES

export const CALLBACK_NAMES: Readonly<Record<number, string>> = {
  1: "PONG",
  4: "CHANNEL_MESSAGE_WITH_SOURCE",
  5: "DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE",
  6: "DEFERRED_UPDATE_MESSAGE",
  7: "UPDATE_MESSAGE",
  8: "APPLICATION_COMMAND_AUTOCOMPLETE_RESULT",
  9: "MODAL",
  10: "PREMIUM_REQUIRED",
  12: "LAUNCH_ACTIVITY"
}

/**
 * PONG answers PING only; UPDATE_MESSAGE and DEFERRED_UPDATE_MESSAGE are for component-based
 * interactions (a component, or a modal opened from one); MODAL is not available for MODAL_SUBMIT
 * and PING.
 */
export const allowedCallbacks = (type: InteractionType, fromMessage: boolean): ReadonlyArray<number> => {
  switch (type) {
    case 1:
      return [1]
    case 2:
      return [4, 5, 9]
    case 3:
      return [4, 5, 6, 7, 9]
    case 5:
      return fromMessage ? [4, 5, 6, 7] : [4, 5]
  }
}

const SCHEMA_OF: Readonly<Record<number, string>> = {
  1: "PongInteractionCallbackRequest",
  4: "CreateMessageInteractionCallbackRequest",
  5: "CreateMessageInteractionCallbackRequest",
  6: "UpdateMessageInteractionCallbackRequest",
  7: "UpdateMessageInteractionCallbackRequest",
  9: "ModalInteractionCallbackRequest"
}

const EPHEMERAL = 64

/** What the documentation adds to the modal schema: 1–5 components, unique custom ids, coherent bounds. */
const modalProblems = (data: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const components = Array.isArray(data["components"]) ? data["components"] : []
  if (components.length < 1 || components.length > 5) {
    problems.push(`$.data.components: a modal has between 1 and 5 components, got ${components.length}`)
  }
  const seen = new Set<string>()
  const inputs = components.flatMap((c, i) => {
    if (!isObject(c)) return []
    if (isObject(c["component"])) return [{ input: c["component"], path: `$.data.components[${i}].component` }]
    const row = Array.isArray(c["components"]) ? c["components"] : []
    return row.filter(isObject).map((input, j) => ({ input, path: `$.data.components[${i}].components[${j}]` }))
  })
  for (const { input, path } of inputs) {
    const id = input["custom_id"]
    if (typeof id === "string") {
      if (seen.has(id)) problems.push(`${path}.custom_id: ${JSON.stringify(id)} is used twice in the modal`)
      seen.add(id)
    }
    const num = (k: string) => (typeof input[k] === "number" ? input[k] : undefined)
    if (input["type"] === 4) {
      const min = num("min_length")
      const max = num("max_length")
      if (min !== undefined && max !== undefined && min > max) problems.push(`${path}: min_length ${min} is above max_length ${max}`)
      const value = typeof input["value"] === "string" ? [...input["value"]].length : undefined
      if (value !== undefined && max !== undefined && value > max) problems.push(`${path}.value: longer than max_length ${max}`)
    }
    if (input["type"] === 3) {
      const options = Array.isArray(input["options"]) ? input["options"].length : 0
      const min = num("min_values") ?? 1
      const max = num("max_values") ?? 1
      if (min > max) problems.push(`${path}: min_values ${min} is above max_values ${max}`)
      if (max > options) problems.push(`${path}: max_values ${max} is above its ${options} options`)
      if (min === 0 && input["required"] !== false) problems.push(`${path}: min_values 0 needs required false`)
      if (input["disabled"] === true) problems.push(`${path}.disabled: a modal cannot hold disabled components`)
    }
  }
  return problems
}

/**
 * Every reason the platform would refuse `answer` to an interaction of `type`; empty when accepted.
 * `messageFlags`: the flags of the message the component sits on (an update keeps its IS_COMPONENTS_V2).
 */
export const answerProblems = (type: InteractionType, fromMessage: boolean, answer: unknown, messageFlags = 0): ReadonlyArray<string> => {
  if (!isObject(answer) || typeof answer["type"] !== "number") return ["the answer is not an interaction response ({ type, data? })"]
  const callback = answer["type"]
  const allowed = allowedCallbacks(type, fromMessage)
  if (!allowed.includes(callback)) {
    const name = CALLBACK_NAMES[callback] ?? "unknown"
    const names = allowed.map((t) => `${t} ${CALLBACK_NAMES[t]}`).join(", ")
    return [`callback type ${callback} (${name}) is not valid for ${INTERACTION_NAMES[type]}: expected ${names}`]
  }
  const problems = [...checkSchema(REQUEST_SCHEMAS, SCHEMA_OF[callback]!, answer)]
  const data = isObject(answer["data"]) ? answer["data"] : undefined
  if (callback === 9 && data !== undefined) problems.push(...modalProblems(data))
  if (callback === 4) {
    const has = (k: string) => data !== undefined && data[k] !== undefined && data[k] !== null && data[k] !== "" &&
      !(Array.isArray(data[k]) && (data[k] as ReadonlyArray<unknown>).length === 0)
    if (!["content", "embeds", "components", "poll", "attachments"].some(has)) problems.push("$.data: cannot send an empty message")
  }
  if (callback === 5 && typeof data?.["flags"] === "number" && (data["flags"] & ~EPHEMERAL) !== 0) {
    problems.push("$.data.flags: a deferred answer may only set EPHEMERAL (64)")
  }
  if ((callback === 4 || callback === 7) && data !== undefined) {
    const v2 = callback === 7 && (messageFlags & Flags.IS_COMPONENTS_V2) !== 0
    problems.push(...messageProblems(data, "answer", { at: "$.data", v2 }))
  }
  return [...new Set(problems)]
}
