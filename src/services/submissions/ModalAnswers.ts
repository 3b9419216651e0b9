/**
 * A page's modal submit read back (forms-runtime.md §3), pure. Whatever the platform's client
 * enforces is checked again here, since a request can be made around the modal: every step of the
 * page answered once and nothing else, a text within the step's `char_limit`, a select's one value
 * among the step's answers, only the component types a page holds. Then the validation words.
 */
import type { Step } from "../../domain/forms/Form.ts"
import { wordFilter } from "../delivery/render/Filters.ts"
import { fieldId } from "./Pages.ts"

export type PageRead =
  | { readonly _tag: "Answers"; readonly answers: Readonly<Record<string, string>> }
  | { readonly _tag: "Refused"; readonly reason: string }

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The inputs of the submit: custom id → a text (Text Input) or values (String Select). */
const inputsOf = (components: ReadonlyArray<unknown>): Map<string, string | ReadonlyArray<string>> | string => {
  const inputs = new Map<string, string | ReadonlyArray<string>>()
  const take = (c: unknown): string | undefined => {
    if (!isObject(c) || typeof c["custom_id"] !== "string") return "an input without a custom id"
    if (inputs.has(c["custom_id"])) return "an input sent twice"
    if (c["type"] === 4 && typeof c["value"] === "string") inputs.set(c["custom_id"], c["value"])
    else if (c["type"] === 3 && Array.isArray(c["values"]) && c["values"].every((v) => typeof v === "string")) inputs.set(c["custom_id"], c["values"])
    else return `a component of type ${JSON.stringify(c["type"])} where a text input or a select was expected`
    return undefined
  }
  for (const top of components) {
    if (!isObject(top)) return "a component that is not an object"
    const problem = top["type"] === 18
      ? take(top["component"])
      : top["type"] === 1 && Array.isArray(top["components"]) && top["components"].length === 1
      ? take(top["components"][0])
      : top["type"] === 10
      ? undefined
      : `a component of unknown type ${JSON.stringify(top["type"])}`
    if (problem !== undefined) return problem
  }
  return inputs
}

const length = (s: string) => [...s].length

/** The answers of `steps` (one page) in `components`, or why they are refused. */
export const readPage = (steps: ReadonlyArray<Step>, components: ReadonlyArray<unknown>): PageRead => {
  const inputs = inputsOf(components)
  if (typeof inputs === "string") return { _tag: "Refused", reason: inputs }
  const answers: Record<string, string> = {}
  for (const step of steps) {
    const value = inputs.get(fieldId(step))
    inputs.delete(fieldId(step))
    const q = JSON.stringify(step.string.slice(0, 45))
    if (value === undefined) return { _tag: "Refused", reason: `no answer to ${q}` }
    if (step.type === "reaction") {
      const index = Array.isArray(value) && value.length === 1 && /^(0|[1-9][0-9]?)$/.test(value[0]!) ? Number(value[0]) : -1
      const chosen = step.answers_validation[index]
      if (typeof value === "string" || chosen === undefined) return { _tag: "Refused", reason: `not one of the answers to ${q}` }
      answers[String(step.step_id)] = chosen
    } else {
      const [min, max] = step.char_limit
      if (typeof value !== "string") return { _tag: "Refused", reason: `no text for ${q}` }
      if (length(value) < min || length(value) > max) {
        return { _tag: "Refused", reason: `the answer to ${q} must be ${min} to ${max} characters` }
      }
      answers[String(step.step_id)] = value
    }
  }
  if (inputs.size > 0) return { _tag: "Refused", reason: "an input that is not on this page" }
  return { _tag: "Answers", answers }
}

export interface ValidationFailure {
  readonly step: Step
}

/** The `message` steps whose answer holds none of their validation words (same folding as the feed word filters). */
export const validationFailures = (steps: ReadonlyArray<Step>, answers: Readonly<Record<string, string>>): ReadonlyArray<Step> =>
  steps.filter((s) =>
    s.type === "message" && s.answers_validation.length > 0 &&
    !wordFilter(answers[String(s.step_id)] ?? "", s.answers_validation, "OR", false).pass
  )

/** What the member reads for the failing steps: each question with its accepted words. */
export const failureMessage = (failed: ReadonlyArray<Step>) =>
  [
    "Some answers need one of the accepted words:",
    ...failed.map((s) => `• ${s.alias !== "" ? s.alias : s.string.slice(0, 200)}: ${s.answers_validation.map((w) => `"${w}"`).join(", ")}`)
  ].join("\n").slice(0, 2000)
