/**
 * A request decoding failure in words a client developer reads (decisions.md "Errors"): one problem
 * per leaf issue, at its path (`steps[2].char_limit`) and in its part of the request (`in`), never
 * an internal schema name. Used by SchemaErrorsLive.ts, RawBody.ts and NullCharacter.ts's callers.
 */
import { SchemaIssue } from "effect"
import type { SchemaAST } from "effect"
import type { HttpApiError } from "effect/http-api"
import type { Problem } from "../../domain/infra/Errors.ts"

/**
 * What a schema expects, in words a client developer reads (decisions.md "Errors": never an internal
 * schema name such as `rss_webhook_options_input`): an object, a list, a text, one of "AND", "OR"…
 */
const expectedInWords = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Objects":
    case "ObjectKeyword":
      return "an object"
    case "Arrays":
      return "a list"
    case "String":
    case "TemplateLiteral":
      return "a text"
    case "Number":
      return "a number"
    case "Boolean":
      return "true or false"
    case "Null":
      return "null"
    case "Literal":
      return JSON.stringify(ast.literal) ?? String(ast.literal)
    case "Union": {
      const literals = ast.types.filter((t) => t._tag === "Literal")
      const others = ast.types.filter((t) => t._tag !== "Literal").map(expectedInWords)
      const words = [...(literals.length > 0 ? [`one of ${literals.map(expectedInWords).join(", ")}`] : []), ...others]
      return [...new Set(words)].join(" or ")
    }
    case "Suspend":
      return expectedInWords(ast.thunk())
    default:
      return "a valid value"
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "InvalidType" ? `expected ${expectedInWords(issue.ast)}` : SchemaIssue.defaultLeafHook(issue)
})

/** Type names in the formatter's own "Expected a | b" (a union no member of which matched), in words. */
const typeWords: Record<string, string> = {
  array: "a list", string: "a text", number: "a number", boolean: "true or false", null: "null", object: "an object",
  undefined: "nothing"
}
const unionInWords = (message: string): string => {
  const m = /^Expected (.+)$/.exec(message)
  if (m === null) return message
  const parts = m[1]!.split(" | ")
  const literals = parts.filter((p) => /^(".*"|-?\d[\d.e+-]*|true|false)$/.test(p))
  const others = parts.filter((p) => !literals.includes(p)).map((p) => typeWords[p] ?? "a valid value")
  return `expected ${[...new Set([...(literals.length > 0 ? [`one of ${literals.join(", ")}`] : []), ...others])].join(" or ")}`
}

const formatIssues = (issue: SchemaIssue.Issue) => {
  const result = formatter(issue)
  return { issues: result.issues.map((i) => ({ ...i, message: unionInWords(i.message) })) }
}

/** `["steps", 2, "char_limit"]` → `steps[2].char_limit`. */
export const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, seg) => {
    const key = typeof seg === "object" && seg !== null ? seg.key : seg
    if (typeof key === "number") return `${acc}[${key}]`
    return acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

const slotName: Record<string, string> = {
  Params: "path parameter",
  Query: "query parameter",
  Headers: "header",
  Payload: "body"
}

export const schemaErrorProblems = (error: HttpApiError.HttpApiSchemaError): Array<Problem> => {
  const issues = formatIssues(error.cause.issue).issues
  const where = slotName[error.kind] ?? "request"
  if (issues.length === 0) return [{ message: `The ${where} is invalid.` }]
  return issues.map((issue) => {
    const path = formatPath(issue.path ?? [])
    const message = issue.message === "Missing key" ? "is required" : issue.message
    return path === ""
      ? { message: `The ${where} is invalid: ${message}` }
      : { message: `${path}: ${message}`, additionalProperties: { path, in: error.kind.toLowerCase() } }
  })
}
