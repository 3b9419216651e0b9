/**
 * /app on a gateway whose control panel was never built: the envelope every error has (the global
 * middleware would otherwise re-dress a bare page as a message-less one), with the Retry-After and
 * `retry_after` every 503 carries (decisions.md "Errors"), and the fix in its message.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GlobalMiddleware } from "../../src/http/edge/GlobalMiddleware.ts"
import { PanelRoutes } from "../../src/http/server/PanelPage.ts"
import { serve } from "../../src/http/server/Server.ts"
import { freePort } from "../utils/FreePort.ts"

it.live("/app without a built bundle → 503 envelope with Retry-After, naming the build", () =>
  Effect.scoped(Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const empty = mkdtempSync(join(tmpdir(), "panel-not-built-"))
    const routes = Layer.mergeAll(
      PanelRoutes({ publicUrl: `http://127.0.0.1:${port}`, bundleDirs: [empty] }),
      GlobalMiddleware({ maintenance: false, requestTimeoutMs: 30_000, accessLog: false })
    ) as Layer.Layer<never, never, HttpRouter.HttpRouter>
    yield* Layer.build(serve(routes, { port, host: "127.0.0.1" }))
    for (const path of ["/app", "/app/forms/1"]) {
      const res = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}${path}`))
      const body = yield* Effect.promise(() => res.json())
      assert.strictEqual(res.status, 503, path)
      assert.include(res.headers.get("content-type") ?? "", "application/json")
      assert.strictEqual(res.headers.get("retry-after"), "60")
      assert.strictEqual(body.errors.length, 1)
      assert.strictEqual(body.errors[0].code, "Service Unavailable")
      assert.include(body.errors[0].message, "npm run build")
      assert.deepStrictEqual(body.errors[0].additionalProperties, { retry_after: 60 })
    }
  })))
