/**
 * What the Hardening*.test.ts files share (issue #12 at the HTTP edge): the routes they call, the
 * exact envelope decoder, and the gateway on PGlite with every log line captured.
 */
import { Effect, Layer, Logger, References, Schema } from "effect"
import { Envelope } from "../../src/domain/infra/Errors.ts"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { testDb } from "../utils/Db.ts"
import { CLIENT_REDIRECT, freePort, TestApp, testAppConfig } from "../utils/TestApp.ts"

export const MODULES = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules`
export const FORMS = `${MODULES}/forms`
export const LOGIN = `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}`

export const decodeEnvelope = (body: string) => Schema.decodeUnknownSync(Envelope)(JSON.parse(body), { onExcessProperty: "error" })

/** The gateway on PGlite with every log line captured (as the JSON logger writes it) at `level` and above (Info). */
export const CapturedApp = (lines: Array<string>, overrides: Parameters<typeof testAppConfig>[1] = {}, level: "Debug" | "Info" = "Info") =>
  Layer.unwrap(Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const config = testAppConfig(port, overrides)
    const capabilities = liveCapabilities(config, SandboxMode.of(config), parseKeyring(generateKey()), testDb("pglite"))
    const capture = Logger.formatJson.pipe(Logger.map((line) => void lines.push(line)))
    return makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
      Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
      Layer.provide(Logger.layer([capture])),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, level)),
      Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth()))
    )
  }))
