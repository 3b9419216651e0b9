/**
 * The robustness fuzz of FuzzRoutes.test.ts: every operation of the served OpenAPI document, a
 * deterministic set of hostile requests for each (FuzzVariantsFixtures.ts, seeded by the operation's name), sent over raw
 * `node:http` (exact request targets: `..`, `%2F`, `%00` and malformed escapes reach the server as
 * written), and the checks every answer must pass (decisions.md "Errors").
 */
import { Schema } from "effect"
import { Agent, request } from "node:http"
import { Envelope, reasonPhrase } from "../../src/domain/infra/Errors.ts"
import type { Variant } from "./FuzzVariantsFixtures.ts"

export type Json = any

// ---------------------------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------------------------

/** FNV-1a of a string: the seed of an operation's choices. */
const fnv1a = (s: string) => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** mulberry32: a small PRNG, the same sequence for the same seed on every run. */
export const prng = (seed: string) => {
  let a = fnv1a(seed)
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  /** `n` distinct elements of `pool` (all of them when n >= its length), in pool order. */
  const sample = <A>(pool: ReadonlyArray<A>, n: number): Array<A> => {
    const idx = pool.map((_, i) => i)
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1))
      ;[idx[i], idx[j]] = [idx[j]!, idx[i]!]
    }
    return idx.slice(0, n).sort((x, y) => x - y).map((i) => pool[i]!)
  }
  /** At most `bytes` bytes of UTF-8 mixing ASCII, Latin-1, CJK and astral characters (whole characters only). */
  const text = (bytes: number) => {
    const alphabet = ["a", "Z", "0", " ", "é", "ß", "漢", "\u{1F600}", "\u{10FFFF}", "<", "'", "\"", "\\", "%"]
    const parts: Array<string> = []
    let size = 0
    for (;;) {
      const c = alphabet[Math.floor(next() * alphabet.length)]!
      const n = Buffer.byteLength(c)
      if (size + n > bytes) return parts.join("")
      parts.push(c)
      size += n
    }
  }
  return { next, sample, text }
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI document
// ---------------------------------------------------------------------------------------------

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required: boolean
  readonly schema: Json
}

export interface Operation {
  readonly method: string
  /** `/api/v1/bots/{appClientId}/servers`. */
  readonly template: string
  readonly name: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The JSON body's schema (references resolved) and example, when the operation takes one. */
  readonly body: { readonly schema: Json; readonly example: Json } | undefined
  /** The numeric statuses the document lists for the operation. */
  readonly statuses: ReadonlySet<number>
  /** Which credential the operation's security asks for. */
  readonly security: "api" | "authToken" | "none"
}

/** `{ $ref }` → the schema it names, at any depth (the document has no cycles in its bodies). */
export const resolveRefs = (doc: Json, node: Json, depth = 0): Json => {
  if (depth > 50) throw new Error("the document's schemas nest too deep")
  if (Array.isArray(node)) return node.map((n) => resolveRefs(doc, n, depth + 1))
  if (node === null || typeof node !== "object") return node
  if (typeof node.$ref === "string") {
    const target = node.$ref.replace(/^#\//, "").split("/").reduce((o: Json, k: string) => o?.[k], doc)
    if (target === undefined) throw new Error(`unresolved ${node.$ref}`)
    return resolveRefs(doc, target, depth + 1)
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolveRefs(doc, v, depth + 1)]))
}

export const operationsOf = (doc: Json): Array<Operation> => {
  const ops: Array<Operation> = []
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (op === null || typeof op !== "object" || op.responses === undefined) continue
      const media = op.requestBody?.content?.["application/json"]
      const security: Array<Record<string, unknown>> = op.security ?? doc.security ?? []
      ops.push({
        method: method.toUpperCase(),
        template,
        name: `${method.toUpperCase()} ${template}`,
        parameters: (op.parameters ?? []).map((p: Json) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: resolveRefs(doc, p.schema ?? {})
        })),
        body: media === undefined ? undefined : { schema: resolveRefs(doc, media.schema ?? {}), example: media.example },
        statuses: new Set(Object.keys(op.responses).filter((s) => /^\d{3}$/.test(s)).map(Number)),
        security: security.some((s) => "bearer" in s || "accessToken" in s)
          ? "api"
          : security.some((s) => "authToken" in s)
          ? "authToken"
          : "none"
      })
    }
  }
  return ops
}

// ---------------------------------------------------------------------------------------------
// Sending and checking
// ---------------------------------------------------------------------------------------------

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
}

/** One request over `agent`, as written; rejects after `timeoutMs` (a hang). */
export const send = (agent: Agent, port: number, v: Variant, defaults: Record<string, string>, timeoutMs: number) =>
  new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = {}
    for (const [k, value] of Object.entries({ ...defaults, ...v.headers })) if (value !== undefined) headers[k] = value
    if (v.body !== undefined) headers["content-length"] = String(Buffer.byteLength(v.body))
    const req = request({ host: "127.0.0.1", port, method: v.method, path: v.target, headers, agent }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        clearTimeout(timer)
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") })
      })
      res.on("error", reject)
    })
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    req.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    req.end(v.body)
  })

/** Statuses any operation may answer (decisions.md "Errors"; 503 only with Retry-After, checked apart). */
export const GLOBAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 408, 413, 415, 429])

const decodeEnvelope = Schema.decodeUnknownSync(Envelope)

/** The problems of one answer (empty: it passes). */
export const checkAnswer = (op: Operation, v: Variant, a: Answer): Array<string> => {
  const problems: Array<string> = []
  const requestId = a.headers["x-request-id"]
  if (typeof requestId !== "string" || requestId === "") problems.push("no X-Request-Id")
  if (a.status >= 500) {
    if (a.status !== 503 || a.headers["retry-after"] === undefined) problems.push(`status ${a.status}`)
  } else if (!op.statuses.has(a.status) && !GLOBAL_STATUSES.has(a.status) && !(v.method !== op.method && a.status === 404)) {
    problems.push(`undocumented status ${a.status}`)
  }
  if (v.control !== undefined && !v.control.includes(a.status)) problems.push(`well-formed request answered ${a.status}, expected ${v.control.join("/")}`)
  if (a.status >= 400) {
    if (!String(a.headers["content-type"] ?? "").startsWith("application/json")) problems.push(`error with Content-Type ${a.headers["content-type"]}`)
    try {
      const envelope = decodeEnvelope(JSON.parse(a.body), { onExcessProperty: "error" })
      if (envelope.errors.length === 0) problems.push("empty errors array")
      for (const item of envelope.errors) {
        if (item.message.trim() === "") problems.push("an error without a message")
        if (item.code !== reasonPhrase[a.status]) problems.push(`code ${JSON.stringify(item.code)} for status ${a.status}`)
      }
    } catch (e) {
      problems.push(`not the envelope: ${String(e).slice(0, 200)}`)
    }
  }
  return problems
}
