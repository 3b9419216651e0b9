/**
 * A small checker of JSON values against the JSON Schema subset Discord's OpenAPI document uses:
 * `$ref` (to `#/components/schemas/*`), `type` (one or several), `required`, `properties`,
 * `additionalProperties`, `items`, `oneOf`, `anyOf`, `allOf`, `const`, `enum`, `pattern`,
 * `minimum`/`maximum`, `minLength`/`maxLength` (in code points), `minItems`/`maxItems`. Formats are not checked. For tests of the sandbox and of Discord clients.
 */

export interface SchemaDocument {
  readonly components: { readonly schemas: Readonly<Record<string, unknown>> }
}

type JsonSchema = Readonly<Record<string, unknown>>

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const jsonType = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

const typeMatches = (expected: string, value: unknown): boolean => {
  const actual = jsonType(value)
  return actual === expected || (expected === "number" && actual === "integer")
}

/** Every problem found, as `path: message`; empty when the value conforms. */
export const checkSchema = (doc: SchemaDocument, schemaName: string, value: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []

  const resolve = (ref: string): JsonSchema => {
    const name = ref.replace("#/components/schemas/", "")
    const schema = doc.components.schemas[name]
    if (!isObject(schema)) throw new Error(`Unresolved $ref ${ref}`)
    return schema
  }

  const check = (schema: JsonSchema, v: unknown, path: string, out: Array<string>): void => {
    if (typeof schema["$ref"] === "string") check(resolve(schema["$ref"]), v, path, out)
    const type = schema["type"]
    if (type !== undefined) {
      const types = Array.isArray(type) ? type.map(String) : [String(type)]
      if (!types.some((t) => typeMatches(t, v))) {
        out.push(`${path}: expected ${types.join("|")}, got ${jsonType(v)}`)
        return
      }
    }
    if ("const" in schema && schema["const"] !== v) out.push(`${path}: expected ${JSON.stringify(schema["const"])}`)
    if (Array.isArray(schema["enum"]) && !schema["enum"].includes(v)) {
      out.push(`${path}: ${JSON.stringify(v)} not in enum`)
    }
    if (typeof schema["pattern"] === "string" && typeof v === "string" && !new RegExp(schema["pattern"]).test(v)) {
      out.push(`${path}: ${JSON.stringify(v)} does not match ${schema["pattern"]}`)
    }
    if (typeof v === "number") {
      if (typeof schema["minimum"] === "number" && v < schema["minimum"]) out.push(`${path}: below minimum`)
      if (typeof schema["maximum"] === "number" && v > schema["maximum"]) out.push(`${path}: above maximum`)
    }
    if (typeof v === "string") {
      const length = [...v].length
      if (typeof schema["minLength"] === "number" && length < schema["minLength"]) out.push(`${path}: shorter than ${schema["minLength"]}`)
      if (typeof schema["maxLength"] === "number" && length > schema["maxLength"]) out.push(`${path}: longer than ${schema["maxLength"]}`)
    }
    if (Array.isArray(v)) {
      if (typeof schema["minItems"] === "number" && v.length < schema["minItems"]) out.push(`${path}: fewer than ${schema["minItems"]} items`)
      if (typeof schema["maxItems"] === "number" && v.length > schema["maxItems"]) out.push(`${path}: more than ${schema["maxItems"]} items`)
    }
    if (Array.isArray(schema["allOf"])) {
      for (const sub of schema["allOf"]) if (isObject(sub)) check(sub, v, path, out)
    }
    const alternatives = (key: "oneOf" | "anyOf") => {
      const list = schema[key]
      if (!Array.isArray(list)) return
      const results = list.map((sub) => {
        const inner: Array<string> = []
        if (isObject(sub)) check(sub, v, path, inner)
        return inner
      })
      const matching = results.filter((inner) => inner.length === 0).length
      if (key === "oneOf" ? matching !== 1 : matching === 0) {
        out.push(`${path}: ${matching} of the ${key} alternatives match`)
      }
      // None matches: the closest alternative's problems say what is wrong (e.g. a label too long);
      // the one of the right JSON type whose `type` matches (Discord's discriminator) first.
      if (matching === 0 && results.length > 0) {
        const rank = (inner: ReadonlyArray<string>) =>
          inner.length + (inner.some((p) => p.startsWith(`${path}.type:`) || p.startsWith(`${path}: expected`)) ? 1_000 : 0)
        out.push(...results.reduce((best, inner) => (rank(inner) < rank(best) ? inner : best)))
      }
    }
    alternatives("oneOf")
    alternatives("anyOf")
    if (isObject(v)) {
      const properties = isObject(schema["properties"]) ? schema["properties"] : {}
      if (Array.isArray(schema["required"])) {
        for (const key of schema["required"]) {
          if (typeof key === "string" && !(key in v)) out.push(`${path}.${key}: required`)
        }
      }
      for (const [key, sub] of Object.entries(properties)) {
        if (key in v && isObject(sub)) check(sub, v[key], `${path}.${key}`, out)
      }
      const additional = schema["additionalProperties"]
      for (const key of Object.keys(v)) {
        if (key in properties) continue
        if (additional === false) out.push(`${path}.${key}: not allowed`)
        else if (isObject(additional)) check(additional, v[key], `${path}.${key}`, out)
      }
    }
    if (Array.isArray(v) && isObject(schema["items"])) {
      const items = schema["items"]
      v.forEach((item, i) => check(items, item, `${path}[${i}]`, out))
    }
  }

  check({ $ref: `#/components/schemas/${schemaName}` }, value, "$", problems)
  return problems
}
