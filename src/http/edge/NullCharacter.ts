/**
 * U+0000 at the edge (decisions.md "Errors": a string that cannot be stored as sent is a 400 at its
 * path). PostgreSQL refuses the null character in `text` and `jsonb`; rather than let one reach a
 * statement (and come back as a 500 or a "database unreachable" 503), every place a client can put
 * one is checked before the handler runs: path parameters, query parameters, cookies, headers and
 * the JSON body at any depth. The fast path is three substring tests (`%00` in the URL and the
 * cookies, `\u0000` in the body text, which the framework reads and caches for decoding anyway).
 */
import { Effect, Result, Schema } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import type { HttpApiEndpoint } from "effect/http-api"
import type { Problem } from "../../domain/infra/Errors.ts"
import {
  hasLoneSurrogate,
  isUtf8Body,
  loneSurrogateProblem,
  mayHoldLoneSurrogate,
  mayHoldNotUtf8Percent,
  notUtf8BodyProblem,
  notUtf8QueryProblems
} from "./IllFormedUnicode.ts"

const NUL = "\u0000"

/** A path as the client can read it: the null character itself shown escaped. */
const shown = (path: string) => path.replaceAll(NUL, "\\u0000")

const problem = (path: string, where: string): Problem => ({
  message: `${shown(path)}: must not contain U+0000 (the null character), which cannot be stored.`,
  additionalProperties: { path: shown(path), in: where }
})

/** On stringPaths' stack: the path beside it is a key that is refused. */
const BAD_KEY: unique symbol = Symbol("BAD_KEY")

/**
 * Paths (`steps[2].string`) of the strings and keys in a parsed JSON value that `bad` refuses, in
 * document order. A loop over an explicit stack, not recursion: JSON.parse accepts a body nested
 * thousands deep, which would overflow the call stack (a 500) before the 400 is written.
 */
export const stringPaths = (value: unknown, bad: (s: string) => boolean, path = "", out: Array<string> = []): Array<string> => {
  // Children pushed last-first, so they are visited (and reported) in document order.
  const stack: Array<readonly [unknown, string]> = [[value, path]]
  while (stack.length > 0) {
    const [node, at] = stack.pop()!
    if (node === BAD_KEY) {
      out.push(at)
    } else if (typeof node === "string") {
      if (bad(node)) out.push(at)
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${at}[${i}]`])
    } else if (typeof node === "object" && node !== null) {
      const entries = Object.entries(node)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!
        const child = at === "" ? key : `${at}.${key}`
        stack.push(bad(key) ? [BAD_KEY, child] : [item, child])
      }
    }
  }
  return out
}

/** Paths of the strings and keys in a parsed JSON value that hold U+0000, in document order. */
export const nulPaths = (value: unknown, path = "", out: Array<string> = []): Array<string> =>
  stringPaths(value, (s) => s.includes(NUL), path, out)

const hasNul = (value: string | ReadonlyArray<string> | undefined): boolean =>
  value !== undefined && (typeof value === "string" ? value.includes(NUL) : value.some((v) => v.includes(NUL)))

const fromRecord = (record: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, where: string) =>
  Object.entries(record).flatMap(([name, value]) => name.includes(NUL) || hasNul(value) ? [problem(name, where)] : [])

const isJson = (type: string | undefined) => (type ?? "application/json").toLowerCase().split(";")[0]!.trim().endsWith("json")

/**
 * Whether `nullCharacterProblems` could find anything in a request whose endpoint has no body: the
 * same three places (`%00` in the URL or the cookies, U+0000 in a header's name or value), read in
 * place. False is the usual answer, and then the check needs no effect at all (SchemaErrorsLive).
 */
export const mayHoldNulBesidesBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  if (request.url.includes("%00") || mayHoldNotUtf8Percent(request.url)) return true
  const headers = request.headers
  if (headers["cookie"]?.includes("%00")) return true
  for (const name in headers) {
    if (name.includes(NUL) || hasNul(headers[name] as string | ReadonlyArray<string> | undefined)) return true
  }
  return false
}

const decoder = new TextDecoder()

/**
 * The JSON body's text that cannot be stored as sent: bytes that are not UTF-8 (the body as a whole),
 * else U+0000 and lone surrogates at their paths (IllFormedUnicode.ts). The fast path is a byte
 * check and two substring tests; the body is parsed only when one of them finds something.
 */
const bodyProblems = (bytes: ArrayBuffer): Array<Problem> => {
  if (!isUtf8Body(bytes)) return [notUtf8BodyProblem]
  const text = decoder.decode(bytes)
  const nul = text.includes("\\u0000")
  const lone = mayHoldLoneSurrogate(text)
  if (!nul && !lone) return []
  let parsed: unknown = undefined
  try {
    parsed = JSON.parse(text)
  } catch {
    // Malformed JSON: the framework answers 400 for it.
  }
  return [
    ...(nul ? nulPaths(parsed).map((path) => problem(path, "payload")) : []),
    ...(lone ? stringPaths(parsed, hasLoneSurrogate).map((path) => loneSurrogateProblem(path, "payload")) : [])
  ]
}

/**
 * Every string of the request that cannot be stored as sent — U+0000, a lone surrogate, bytes that
 * are not UTF-8 — one problem per parameter, cookie, header or body field (empty: none).
 */
export const nullCharacterProblems = (endpoint: HttpApiEndpoint.Top) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const problems: Array<Problem> = []
    // A decoded parameter can only hold U+0000 if the URL spells it `%00` (the parser refuses the raw byte).
    if (request.url.includes("%00")) {
      const route = yield* HttpRouter.RouteContext
      problems.push(...fromRecord(route.params, "params"))
      problems.push(...fromRecord(yield* HttpServerRequest.ParsedSearchParams, "query"))
    }
    // A parameter whose bytes are not UTF-8 reaches the handler still percent-encoded (the parser's
    // decodeURIComponent fails and keeps the raw text): refused by name instead. (A path whose bytes
    // are not UTF-8 never routes: Envelope.ts answers it.)
    if (mayHoldNotUtf8Percent(request.url)) problems.push(...notUtf8QueryProblems(request.url))
    if (request.headers["cookie"]?.includes("%00")) problems.push(...fromRecord(request.cookies, "cookie"))
    // HTTP/1.1 refuses the raw byte in a header; kept for other transports in front of us.
    problems.push(...fromRecord(request.headers, "headers"))
    if (endpoint.payload.size > 0 && isJson(request.headers["content-type"])) {
      // A body that cannot be read (too large, cut) is left to the framework's own answer.
      const bytes = yield* Effect.result(request.arrayBuffer)
      if (Result.isSuccess(bytes)) problems.push(...bodyProblems(bytes.success))
    }
    return problems
  })

const decodeProblems = (
  kind: "Params" | "Query" | "Payload",
  schema: Schema.Top,
  input: unknown,
  toProblems: (error: HttpApiError.HttpApiSchemaError) => Array<Problem>
) =>
  Effect.map(
    Effect.result(
      Schema.decodeUnknownEffect(schema as Schema.Codec<unknown, unknown>)(input, { errors: "all" }) as Effect.Effect<
        unknown,
        Schema.SchemaError
      >
    ),
    (r) => Result.isFailure(r) ? toProblems(new HttpApiError.HttpApiSchemaError({ kind, cause: r.failure })) : []
  )

/**
 * The other problems of the same request, so the answer lists every problem at once (decisions.md):
 * the endpoint's parameter, query and JSON body schemas, run on what the client sent. A path that
 * already has its U+0000 problem is not reported twice.
 */
export const schemaProblemsBesides = (
  endpoint: HttpApiEndpoint.Top,
  nul: ReadonlyArray<Problem>,
  toProblems: (error: HttpApiError.HttpApiSchemaError) => Array<Problem>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const route = yield* HttpRouter.RouteContext
    const query = yield* HttpServerRequest.ParsedSearchParams
    const problems: Array<Problem> = []
    if (endpoint.params !== undefined) problems.push(...yield* decodeProblems("Params", endpoint.params, route.params, toProblems))
    if (endpoint.query !== undefined) {
      problems.push(...yield* decodeProblems("Query", Schema.toCodecArrayFromSingle(endpoint.query as Schema.Codec<unknown, unknown>), query, toProblems))
    }
    const json = endpoint.payload.get("application/json")
    if (json !== undefined && json.encoding._tag === "Json") {
      const text = yield* Effect.result(request.text)
      if (Result.isSuccess(text) && text.success !== "") {
        let parsed: unknown = undefined
        try {
          parsed = JSON.parse(text.success)
        } catch {
          return problems
        }
        const schema = json.schemas.length === 1 ? json.schemas[0] : Schema.Union(json.schemas)
        problems.push(...yield* decodeProblems("Payload", schema, parsed, toProblems))
      }
    }
    const taken = new Set(nul.map((p) => p.additionalProperties?.["path"]))
    return problems.filter((p) => !taken.has(p.additionalProperties?.["path"]))
  })
