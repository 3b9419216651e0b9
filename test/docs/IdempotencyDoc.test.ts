/**
 * The OpenAPI document states the Idempotency-Key header (issue #30): an optional header parameter
 * of every POST, PATCH and DELETE under /api/v1, with its 409 and 422; none on reads or /auth.
 */
import { assert, describe, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { documentedApi } from "../../src/http/contract/OpenApiDocument.ts"

const spec = OpenApi.fromApi(documentedApi("http://127.0.0.1:8080")) as unknown as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; required?: boolean }>; responses: Record<string, unknown> }>>
}

describe("Idempotency-Key in the OpenAPI document", () => {
  it("every write of /api/v1 takes it (optional), with 409 and 422; nothing else does", () => {
    let writes = 0
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (typeof op !== "object" || op === null || !("responses" in op)) continue
        const header = (op.parameters ?? []).filter((p) => p.in === "header" && p.name === "Idempotency-Key")
        const write = path.startsWith("/api/v1/") && ["post", "patch", "delete"].includes(method)
        if (!write) {
          assert.lengthOf(header, 0, `${method} ${path}`)
          continue
        }
        writes++
        assert.lengthOf(header, 1, `${method} ${path}`)
        assert.isFalse(header[0]!.required === true)
        assert.property(op.responses, "409", `${method} ${path}`)
        assert.property(op.responses, "422", `${method} ${path}`)
      }
    }
    // Forms: create, update, delete; publish, unpublish, review; six feed modules: create, update, delete, test, refresh.
    assert.strictEqual(writes, 3 + 3 + 6 * 5)
  })
})
