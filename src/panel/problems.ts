/**
 * Every failure of a call in words: the envelope's messages (decoded by the typed client into the
 * error classes), the wait of a 429, a refused payload with the paths of its fields. Pure.
 */
import { SchemaIssue } from "effect"
import { issueProblems } from "../http/client.ts"

export interface FieldProblem {
  readonly message: string
  /** `steps[2].char_limit`, as the envelope's `additionalProperties.path` names it. */
  readonly path?: string
}

export interface Failure {
  /** The HTTP status when the gateway answered; undefined for a network failure or a refused payload. */
  readonly status: number | undefined
  /** One sentence for the page. */
  readonly message: string
  readonly problems: ReadonlyArray<FieldProblem>
  /** Seconds to wait (429 and 503). */
  readonly retryAfter?: number
}

const STATUS: Record<string, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  RequestTimeout: 408,
  Conflict: 409,
  TooManyRequests: 429,
  ServiceUnavailable: 503
}

interface EnvelopeError {
  readonly _tag: string
  readonly problems: ReadonlyArray<{ readonly message: string; readonly additionalProperties?: Record<string, unknown> }>
}

const isEnvelopeError = (u: unknown): u is EnvelopeError =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string" &&
  Array.isArray((u as { problems?: unknown }).problems)

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** A wait in words: "45 seconds", "2 minutes", "1 hour 5 minutes". */
export const waitInWords = (seconds: number): string => {
  const s = Math.max(1, Math.ceil(seconds))
  if (s < 120) return plural(s, "second")
  if (s < 3600) return plural(Math.ceil(s / 60), "minute")
  const h = Math.floor(s / 3600)
  const m = Math.ceil((s % 3600) / 60)
  return m === 0 ? plural(h, "hour") : `${plural(h, "hour")} ${plural(m, "minute")}`
}

/** The gateway's words already say how long to wait ("…; try again in 60 seconds.", "…; retry after 12 s."). */
const NAMES_THE_WAIT = /(try again in|retry after) \d/i

/** The failure of a call through the typed client, whatever it was. */
export const toFailure = (error: unknown): Failure => {
  if (isEnvelopeError(error)) {
    const status = STATUS[error._tag]
    const problems = error.problems.map((p): FieldProblem => {
      const path = p.additionalProperties?.["path"]
      return typeof path === "string" && path !== "" ? { message: p.message, path } : { message: p.message }
    })
    const retry = error.problems.map((p) => p.additionalProperties?.["retry_after"]).find((r) => typeof r === "number")
    const said = problems.map((p) => p.message).join(" ")
    if (status === 429) {
      const wait = typeof retry === "number" ? retry : 60
      // The gateway's own words name the wait already ("…; try again in 60 seconds."): said once.
      const message = NAMES_THE_WAIT.test(said)
        ? `Too many requests: ${said}`
        : `Too many requests. ${said === "" ? "" : `${said} `}Try again in ${waitInWords(wait)}.`
      return { status, message, problems, retryAfter: wait }
    }
    if (status === 503 && typeof retry === "number" && !NAMES_THE_WAIT.test(said)) {
      return { status, message: `${said} Try again in ${waitInWords(retry)}.`, problems, retryAfter: retry }
    }
    return { status, message: said === "" ? `The gateway refused the request (${error._tag}).` : said, problems }
  }
  if (typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SchemaError") {
    const problems = issueProblems((error as { issue: SchemaIssue.Issue }).issue).map((p): FieldProblem => {
      const path = p.additionalProperties?.["path"]
      return typeof path === "string" ? { message: p.message, path } : { message: p.message }
    })
    return { status: undefined, message: "Some fields are not valid: " + problems.map((p) => p.message).join(" "), problems }
  }
  const response = typeof error === "object" && error !== null ? (error as { response?: { status?: unknown } }).response : undefined
  if (response !== undefined && typeof response.status === "number") {
    return { status: response.status, message: `The gateway answered ${response.status} with a body this panel cannot read.`, problems: [] }
  }
  return {
    status: undefined,
    message: "The gateway could not be reached. Check your connection and try again.",
    problems: []
  }
}

/** A message without its leading "path: " (shown next to the field that path names). */
export const withoutPath = (p: FieldProblem): string =>
  p.path !== undefined && p.message.startsWith(`${p.path}: `) ? p.message.slice(p.path.length + 2) : p.message
