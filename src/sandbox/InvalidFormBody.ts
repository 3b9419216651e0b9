/**
 * Discord's refusal of a body it cannot take: 400 `{"code": 50035, "message": "Invalid Form Body",
 * "errors": {...}}`, each problem under its path. A problem is `path: message`, or
 * `path: message (CODE)` to give the error Discord's own code (else BASE_TYPE_INVALID).
 */
import { discordError } from "./DiscordHttp.ts"

const CODED = /^([\s\S]*) \(([A-Z][A-Z0-9_]+)\)$/

/** `$.components[0].custom_id: longer than 100` → `{ components: { 0: { custom_id: { _errors: [...] } } } }`. */
export const errorTree = (problems: ReadonlyArray<string>): Record<string, unknown> => {
  const root: Record<string, unknown> = {}
  for (const problem of new Set(problems)) {
    const at = problem.indexOf(": ")
    const keys = problem.slice(1, at).split(/\.|\[|\]/).filter((k) => k !== "")
    let node = root
    for (const key of keys) node = (node[key] ??= {}) as Record<string, unknown>
    const errors = (node["_errors"] ??= []) as Array<unknown>
    const text = problem.slice(at + 2)
    const coded = CODED.exec(text)
    errors.push(coded ? { code: coded[2], message: coded[1] } : { code: "BASE_TYPE_INVALID", message: text })
  }
  return root
}

export const invalidFormBody = (problems: ReadonlyArray<string>) =>
  discordError(400, "Invalid Form Body", 50035, { errors: errorTree(problems) })
