/**
 * How a form body's schema failure reads as the 400's problems, one per leaf issue at its path
 * (`steps[2].char_limit: …`, `in: "payload"`): the same words for the forms service
 * (services/forms/FormValidation.ts) and the panel, which shows them beside each field before
 * anything is sent (it reaches this through the typed client).
 */
import { SchemaIssue } from "effect"
import type { Problem } from "../infra/Errors.ts"

/** A problem of the body at `path`. */
export const formProblem = (path: string, message: string): Problem => ({
  message: `${path}: ${message}`,
  additionalProperties: { path, in: "payload" }
})

/** `["steps", 2, "char_limit"]` → `steps[2].char_limit`. */
const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) =>
    typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`, "")

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) =>
    issue._tag === "MissingKey"
      ? "is required"
      : issue._tag === "UnexpectedKey"
      ? "is one element too many"
      : SchemaIssue.defaultLeafHook(issue)
})

/** The problems of a schema failure, one per leaf issue, each at its path. */
export const issueProblems = (issue: SchemaIssue.Issue): Array<Problem> =>
  formatter(issue).issues.map((i) => {
    // Stryker disable next-line ArrayDeclaration,StringLiteral: Effect's formatter always gives a path array of plain property keys (SchemaIssue toDefaultIssues), never undefined nor { key } segments
    const path = formatPath((i.path ?? []).map((k) => (typeof k === "object" && k !== null ? (k as { key: PropertyKey }).key : k)))
    return path === "" ? { message: `The body is invalid: ${i.message}` } : formProblem(path, i.message)
  })
