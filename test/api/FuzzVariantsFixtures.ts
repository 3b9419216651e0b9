/**
 * The hostile requests of the fuzz (FuzzRoutes.test.ts), one deterministic set per operation of the
 * served document (seeded by its name): path segments, query values, headers, credentials, bodies.
 */
import type { Json, Operation } from "./FuzzRoutesFixtures.ts"
import { prng } from "./FuzzRoutesFixtures.ts"

// ---------------------------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------------------------

export interface Variant {
  readonly label: string
  readonly method: string
  /** The raw request target, sent as written. */
  readonly target: string
  /** Headers; `undefined` removes a default (User-Agent, the token). */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body?: string | undefined
  /** The well-formed request of the operation: its answer must be one of `control`. */
  readonly control?: ReadonlyArray<number>
}

export interface Context {
  /** Encoded value of each path parameter that names something real. */
  readonly pathValues: (op: Operation) => Readonly<Record<string, string>>
  /** The query string of a well-formed request (without `?`), e.g. the login's redirect_uri. */
  readonly baseQuery: (op: Operation) => string
  /** The credential headers of a well-formed request. */
  readonly credentials: (op: Operation) => Readonly<Record<string, string>>
  /** A body that should be accepted (built from the document's example), or undefined. */
  readonly validBody: (op: Operation) => Json | undefined
  /** The statuses the well-formed request may answer (undefined: no control request). */
  readonly control: (op: Operation) => ReadonlyArray<number> | undefined
  /** Whether the well-formed request goes first (it ends what it names: a delete, a refresh). */
  readonly controlFirst: (op: Operation) => boolean
}

const TEN_KB = "9".repeat(10 * 1024)

/** Hostile path segments, as written on the wire. */
const PATH_POOL: ReadonlyArray<readonly [string, string]> = [
  ["empty", ""],
  ["zero", "0"],
  ["negative", "-1"],
  ["leading zero", "01"],
  ["plus sign", "%2B1"],
  ["fraction", "1.5"],
  ["exponent", "1e3"],
  ["hex", "0x1F"],
  ["space", "%201"],
  ["letters", "abc"],
  ["NUL", "%00"],
  ["digit and NUL", "1%00"],
  ["latin-1 escape", "%C3%A9"],
  ["emoji escape", "%F0%9F%98%80"],
  ["surrogate in UTF-8", "%ED%A0%80"],
  ["invalid UTF-8", "%FF%FE"],
  ["malformed escape", "%ZZ"],
  ["lone percent", "%"],
  ["truncated escape", "%C3"],
  ["dot dot", ".."],
  ["encoded dot dot", "%2E%2E"],
  ["encoded slash", "%2F"],
  ["id with encoded slash", "1%2F2"],
  ["traversal", "..%2F..%2F..%2Fetc%2Fpasswd"],
  ["encoded question mark", "1%3Fa=1"],
  ["encoded hash", "1%23x"],
  ["beyond int8", "9223372036854775808"],
  ["beyond uint64", "18446744073709551616"],
  ["30 digits", "123456789012345678901234567890"],
  ["raw latin-1 byte", "\u00ff"]
]
const PATH_ALWAYS = ["10 KB", "encoded slash", "NUL", "dot dot"]

/** Hostile query values (already encoded). */
const QUERY_POOL: ReadonlyArray<readonly [string, string]> = [
  ["letters", "abc"],
  ["negative", "-1"],
  ["zero", "0"],
  ["huge", "1e308"],
  ["30 digits", "123456789012345678901234567890"],
  ["fraction", "1.5"],
  ["empty", ""],
  ["NUL", "a%00"],
  ["malformed escape", "%ZZ"],
  ["surrogate in UTF-8", "%ED%A0%80"],
  ["10 KB", "7".repeat(10 * 1024)],
  ["array syntax", "%5B1%2C2%5D"]
]

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v)

/** Every string leaf of a JSON value, as a path of keys. */
const stringLeaves = (value: Json, path: Array<string | number> = []): Array<Array<string | number>> =>
  typeof value === "string"
    ? [path]
    : Array.isArray(value)
    ? value.flatMap((v, i) => stringLeaves(v, [...path, i]))
    : isObject(value)
    ? Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]))
    : []

const setAt = (value: Json, path: ReadonlyArray<string | number>, leaf: (old: Json) => Json): Json => {
  if (path.length === 0) return leaf(value)
  const [head, ...rest] = path
  const copy: Json = Array.isArray(value) ? [...value] : { ...value }
  copy[head!] = setAt(value?.[head!], rest, leaf)
  return copy
}

/** A value of another JSON type than the schema asks for. */
const wrongTypeFor = (schema: Json): Json => {
  const types = new Set<string>(
    schema?.type !== undefined
      ? [schema.type].flat()
      : Array.isArray(schema?.anyOf)
      ? schema.anyOf.flatMap((s: Json) => [s?.type].flat().filter(Boolean))
      : []
  )
  if (types.size === 0) return undefined // anything goes: no wrong type
  if (!types.has("number") && !types.has("integer")) return 12345
  if (!types.has("string")) return "12345"
  if (!types.has("boolean")) return true
  return [{ not: "this" }]
}

/** The paths (keys) of the properties a schema documents, one level under `prefix`. */
const properties = (schema: Json): Array<[string, Json]> => isObject(schema?.properties) ? Object.entries(schema.properties) : []

/** Paths to the integer-typed places of a valid body (char_limit elements...), from the schema. */
const integerPaths = (schema: Json, value: Json, path: Array<string | number> = []): Array<Array<string | number>> => {
  if (schema?.type === "integer") return [path]
  if (Array.isArray(value)) {
    return value.flatMap((v, i) =>
      integerPaths(Array.isArray(schema?.prefixItems) ? schema.prefixItems[i] : schema?.items, v, [...path, i])
    )
  }
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => integerPaths(schema?.properties?.[k], v, [...path, k]))
  return []
}

const nest = (depth: number, inner: string, open = "[", close = "]") => open.repeat(depth) + inner + close.repeat(depth)
const nestObjects = (depth: number, inner: string) => "{\"a\":".repeat(depth) + inner + "}".repeat(depth)

const NUM = "\"__fuzz_number__\""

/**
 * The hostile requests of one operation, deterministic for its name, and its well-formed request
 * (`control`): last, so the variants run against the fixtures, or first for a request that ends them.
 */
export const variantsOf = (op: Operation, ctx: Context): Array<Variant> => {
  const rnd = prng(op.name)
  const values = ctx.pathValues(op)
  const pathParams = op.parameters.filter((p) => p.in === "path")
  const queryParams = op.parameters.filter((p) => p.in === "query")
  const target = (overrides: Record<string, string> = {}, query = ctx.baseQuery(op)) =>
    op.template.replace(/\{([^}]+)\}/g, (_, name: string) => overrides[name] ?? values[name] ?? "1") +
    (query === "" ? "" : `?${query}`)
  const credentials = ctx.credentials(op)
  const json = { "content-type": "application/json" }
  const base = (label: string, rest: Partial<Omit<Variant, "label">> = {}): Variant => ({
    label,
    method: op.method,
    target: target(),
    ...rest,
    headers: { ...credentials, ...rest.headers }
  })
  const out: Array<Variant> = []
  const valid = ctx.validBody(op)
  const validText = valid === undefined ? undefined : JSON.stringify(valid)
  const withBody = (label: string, body: string, headers: Record<string, string | undefined> = json) =>
    out.push(base(`body: ${label}`, { body, headers }))

  // Credentials and headers.
  if (op.security !== "none") {
    const noCredentials = Object.fromEntries(Object.keys(credentials).map((k) => [k, undefined]))
    out.push(base("no credentials", { headers: { ...noCredentials, ...(validText ? json : {}) }, body: validText }))
    out.push(base("junk bearer token", {
      headers: { ...noCredentials, authorization: `Bearer bmg_at_${"A".repeat(43)}`, ...(validText ? json : {}) },
      body: validText
    }))
    out.push(base("10 KB token in X-Access-Token", {
      headers: { ...noCredentials, "x-access-token": `Bearer ${"t".repeat(10 * 1024)}`, ...(validText ? json : {}) },
      body: validText
    }))
    out.push(base("Basic credentials", { headers: { ...noCredentials, authorization: "Basic Zm9vOmJhcg==" } }))
  }
  out.push(base("no User-Agent", { headers: { "user-agent": undefined, ...(validText ? json : {}) }, body: validText }))
  out.push(base("hostile X-Request-Id and latin-1 header", {
    headers: { "x-request-id": `../${"r".repeat(300)} x`, "x-fuzz": "\u00ff\u00e9" }
  }))
  out.push(base("unknown method on the path", { method: "PUT" }))
  for (const p of op.parameters.filter((p) => p.in === "header")) {
    for (const [label, value] of [["empty", ""], ["10 KB", "h".repeat(10 * 1024)], ["latin-1", "\u00ff\u00e9"], ["Bearer only", "Bearer "]]) {
      out.push(base(`header ${p.name}: ${label}`, { headers: { [p.name]: value } }))
    }
  }

  // The path's own shape: what a router may normalise, or not.
  const plain = target({}, "")
  const query = ctx.baseQuery(op) === "" ? "" : `?${ctx.baseQuery(op)}`
  const lastSlash = plain.lastIndexOf("/")
  for (const [label, shaped] of [
    ["trailing slash", `${plain}/`],
    ["double slash", `${plain.slice(0, lastSlash)}//${plain.slice(lastSlash + 1)}`],
    ["dot segment", `${plain.slice(0, lastSlash)}/./${plain.slice(lastSlash + 1)}`],
    ["dot-dot back to itself", `${plain}/../${plain.slice(lastSlash + 1)}`],
    ["upper case", plain.toUpperCase()],
    ["matrix parameter", `${plain};a=1`],
    ["NUL suffix", `${plain}%00`],
    ["fragment", `${plain}#frag`]
  ] as const) {
    out.push(base(`path shape: ${label}`, { target: `${shaped}${query}` }))
  }

  // Query: unknown and repeated keys, malformed escapes; each documented parameter with hostile values.
  const q = ctx.baseQuery(op)
  const plus = (extra: string) => q === "" ? extra : `${q}&${extra}`
  out.push(base("query: unknown and repeated keys", { target: target({}, plus("zz_unknown=1&zz_unknown=2&__proto__=x")) }))
  out.push(base("query: malformed escapes", { target: target({}, plus("%ZZ=%E0%A4%A&a%00=1")) }))
  for (const p of queryParams) {
    for (const [label, value] of rnd.sample(QUERY_POOL, 4)) {
      const others = q.split("&").filter((kv) => kv !== "" && kv.split("=")[0] !== p.name)
      out.push(base(`query ${p.name}: ${label}`, { target: target({}, [...others, `${p.name}=${value}`].join("&")) }))
    }
    out.push(base(`query ${p.name}: repeated`, { target: target({}, plus(`${p.name}=1&${p.name}=2`)) }))
  }

  // Path parameters: the last one (the most specific) gets the most values.
  pathParams.forEach((p, i) => {
    const last = i === pathParams.length - 1
    const n = op.body !== undefined ? (last ? 6 : 2) : last ? 10 : 3
    const pool: Array<readonly [string, string]> = [...PATH_POOL, ["10 KB", TEN_KB]]
    const chosen = new Map(rnd.sample(pool, n))
    if (last) for (const always of PATH_ALWAYS) chosen.set(always, pool.find(([l]) => l === always)![1])
    for (const [label, value] of chosen) {
      out.push(base(`path ${p.name}: ${label}`, { target: target({ [p.name]: value }), body: validText, headers: validText ? json : {} }))
    }
  })

  // Bodies.
  if (op.body !== undefined && valid !== undefined && validText !== undefined) {
    const schema = op.body.schema
    withBody("not JSON", "hello, world")
    withBody("truncated JSON", validText.slice(0, Math.floor(validText.length / 2)))
    withBody("empty", "")
    withBody("BOM before JSON", `\uFEFF${validText}`)
    for (const [label, text] of [["array", "[]"], ["string", "\"form\""], ["number", "42"], ["null", "null"], ["true", "true"]]) {
      withBody(`top-level ${label}`, text!)
    }
    // Every documented field of the wrong type, at the top and one level down.
    const allWrong: Record<string, unknown> = { ...valid }
    for (const [k, s] of properties(schema)) {
      const w = wrongTypeFor(s)
      if (w !== undefined) allWrong[k] = w
    }
    withBody("every field of the wrong type", JSON.stringify(allWrong))
    for (const [k, s] of properties(schema)) {
      if (s?.type === "object" && isObject(valid[k])) {
        const nested: Record<string, unknown> = {}
        for (const [nk, ns] of properties(s)) {
          const w = wrongTypeFor(ns)
          if (w !== undefined) nested[nk] = w
        }
        withBody(`every field of ${k} of the wrong type`, JSON.stringify({ ...valid, [k]: nested }))
      }
    }
    const leaves = stringLeaves(valid)
    const poisonAll = (f: (s: string) => string) => leaves.reduce((v, path) => setAt(v, path, f), valid)
    withBody("U+0000 in every string", JSON.stringify(poisonAll((s) => `${s}\u0000`)))
    // A lone surrogate can only travel escaped: JSON.stringify writes "\ud800" for it.
    withBody("lone surrogate in every string", JSON.stringify(poisonAll((s) => `${s}\ud800`)))
    for (const path of rnd.sample(leaves, 4)) {
      withBody(`lone surrogate at ${path.join(".")}`, JSON.stringify(setAt(valid, path, (s) => `\udc00${s}\ud800`)))
    }
    // 100 KB (UTF-8) in up to 6 string fields: under the 1 MiB limit, over every length rule.
    const long = rnd.text(100 * 1024)
    const longAt = rnd.sample(leaves, 6)
    withBody("100 KB strings", JSON.stringify(longAt.reduce((v, path) => setAt(v, path, () => long), valid)))
    const first = properties(schema)[0]?.[0] ?? "x"
    withBody("depth 5000 at the top", nest(5000, "1"))
    withBody(`depth 5000 in ${first}`, JSON.stringify({ ...valid, [first]: "__deep__" }).replace("\"__deep__\"", nest(5000, "\"\\u0000\"")))
    withBody("depth 5000 objects in an unknown field", JSON.stringify({ ...valid, zz_deep: "__deep__" }).replace("\"__deep__\"", nestObjects(5000, "null")))
    const unknown = properties(schema).find(([, s]) => isObject(s) && Object.keys(s).length === 0)?.[0]
    if (unknown !== undefined) {
      withBody(`depth 5000 in ${unknown} (any value)`, JSON.stringify({ ...valid, [unknown]: "__deep__" }).replace("\"__deep__\"", nest(5000, "0")))
    }
    withBody("extra unknown fields and __proto__", JSON.stringify({ ...valid, zz_unknown: 1 }).replace(/^\{/, "{\"__proto__\":{\"polluted\":true},\"constructor\":{\"prototype\":{\"polluted\":true}},"))
    withBody("duplicate keys", validText.replace(/^\{/, `{${JSON.stringify(first)}:[1,2],`))
    // Numbers where integers are expected (else in the first string field).
    const numberPaths = integerPaths(schema, valid)
    const numberAt = numberPaths.length > 0 ? numberPaths : leaves.slice(0, 1)
    for (const n of ["1e308", "-0", "1.5", "1e400", "-1e400", "123456789012345678901234567890", "9007199254740993"]) {
      withBody(`number ${n} where an integer goes`, JSON.stringify(numberAt.reduce((v, path) => setAt(v, path, () => "__fuzz_number__"), valid)).replaceAll(NUM, n))
    }
    if (numberPaths.length === 0) {
      // No integer in this body: the step limits of the forms are the only ones; still, numbers as strings' values.
      withBody("numbers in every string", JSON.stringify(poisonAll(() => "__fuzz_number__")).replaceAll(NUM, "1e308"))
    }
    // Media types.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/notjson", "application/json; charset=utf-16"]) {
      withBody(`Content-Type ${type}`, validText, { "content-type": type })
    }
    withBody("no Content-Type", validText, { "content-type": undefined })
  } else if (op.method === "POST" || op.method === "PATCH") {
    // A route without a body: a body it does not expect.
    withBody("unexpected JSON", "{\"x\":[1,2,{\"y\":null}]}")
    withBody("unexpected text", "hello", { "content-type": "text/plain" })
    withBody("unexpected deep JSON", nest(5000, "0"))
  } else {
    withBody("a body on a read", "{not json", { "content-type": "text/plain" })
  }

  const control = ctx.control(op)
  if (control === undefined) return out
  const wellFormed = base("well-formed", { body: validText, headers: validText ? json : {}, control })
  return ctx.controlFirst(op) ? [wellFormed, ...out] : [...out, wellFormed]
}

