/**
 * The document the running gateway serves at /openapi.json, under Redocly's `recommended` ruleset:
 * 0 errors and 0 warnings. Redocly runs offline (telemetry and the update check off).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { json, raw, TestApp } from "../utils/TestApp.ts"

const REDOCLY = join(process.cwd(), "node_modules", "@redocly", "cli", "bin", "cli.js")

interface Lint {
  readonly totals: { readonly errors: number; readonly warnings: number }
  readonly problems: ReadonlyArray<{ readonly ruleId: string; readonly message: string; readonly location: ReadonlyArray<{ readonly pointer: string }> }>
}

const lint = (doc: unknown) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "openapi-lint-"))),
    (dir) =>
      Effect.promise(() => {
        writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc))
        writeFileSync(join(dir, "redocly.yaml"), "extends:\n  - recommended\ntelemetry: off\n")
        return new Promise<Lint>((resolve, reject) =>
          execFile(
            process.execPath,
            [REDOCLY, "lint", "openapi.json", "--config", "redocly.yaml", "--format=json"],
            { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }, timeout: 60_000 },
            // Exit 1 when problems are found: the JSON on stdout says which.
            (error, stdout, stderr) => {
              try {
                resolve(JSON.parse(stdout) as Lint)
              } catch {
                reject(new Error(`redocly failed: ${error?.message}\n${stderr}`))
              }
            }
          )
        )
      }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("OpenAPI document", (it) => {
  it.effect("passes Redocly's recommended rules with no error and no warning", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const doc = yield* json(yield* raw({}, "/openapi.json"))
      const result = yield* lint(doc)
      const found = result.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
      assert.deepStrictEqual(found, [])
      assert.deepStrictEqual(result.totals.errors + result.totals.warnings, 0)
      // What the lint does not check but the issue asked for.
      assert.deepStrictEqual(doc.servers, [{ url: app.url, description: "This gateway (PUBLIC_URL)" }])
      assert.strictEqual(doc.info.version, "0.1.0")
      assert.strictEqual(doc.components.securitySchemes.bearer.scheme, "bearer")
      assert.deepStrictEqual(Object.keys(doc.components.schemas).filter((k) => /_input_\d+$/.test(k)), [])
      const user = doc.paths["/api/v1/user"].get
      for (const status of ["200", "401", "429", "500", "503"]) assert.property(user.responses, status)
      assert.property(user.responses["401"].headers, "WWW-Authenticate")
      assert.property(user.responses["429"].headers, "Retry-After")
      assert.property(user.responses["200"].headers, "RateLimit")
      assert.property(user.responses["200"].headers, "RateLimit-Policy")
      assert.property(user.responses["200"].headers, "X-Request-Id")
      const token = doc.paths["/auth/idp/token"].post
      assert.deepStrictEqual(token.security, [{ authToken: [] }])
      assert.notInclude(token.parameters.map((p: { name: string }) => p.name.toLowerCase()), "authorization")
      assert.include(token.parameters.map((p: { name: string }) => p.name), "x-code-verifier")
      assert.notInclude(doc.paths["/auth/idp/token/check"].post.parameters.map((p: { name: string }) => p.name), "x-code-verifier")
      const formCreate = doc.paths["/api/v1/bots/{appClientId}/servers/{serverId}/modules/forms"].post
      assert.property(formCreate.requestBody.content["application/json"], "example")
      for (const status of ["413", "415"]) assert.property(formCreate.responses, status)
    }), { timeout: 90_000 })
})
