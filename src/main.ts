/** Entry point: configuration, keys, logging, then the application layer until SIGTERM/SIGINT. */
import { NodeRuntime } from "@effect/platform-node"
import { Duration, Effect, Exit, Layer, Logger, References, Result } from "effect"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppLive } from "./layers/App.ts"
import { SandboxMode } from "./sandbox/SandboxMode.ts"
import { JobDrainTimeout } from "./layers/jobs/JobEnginePgBoss.ts"
import { MemoryReducerNudge } from "./layers/infra/MemoryReducerNudge.ts"
import { ConfigInvalid, configInvalid, loadConfig, parseLogLevel } from "./layers/config/AppConfig.ts"
import { readFeedsEnv } from "./layers/config/FeedsConfigEnv.ts"
import { readFormsEnv } from "./layers/config/FormsConfigEnv.ts"
import { checkPort, describeStartupFailure } from "./layers/config/StartupErrors.ts"
import { defaultServerLimits, ServerLimits } from "./http/server/NodeEdge.ts"
import type { AppConfigShape } from "./layers/config/AppConfig.ts"
import { generateKey, parseKeyring } from "./services/infra/Cipher.ts"
import type { Keyring } from "./services/infra/Cipher.ts"

/** In sandbox mode without TOKEN_ENCRYPTION_KEY, a key is generated once into the data folder. */
const sandboxKeyring = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const file = join(config.dataDir, "token-encryption.key")
    if (!existsSync(file)) {
      mkdirSync(config.dataDir, { recursive: true })
      writeFileSync(file, `k1:${generateKey()}\n`, { mode: 0o600 })
      yield* Effect.logWarning(`no TOKEN_ENCRYPTION_KEY: generated a sandbox key in ${file}; set TOKEN_ENCRYPTION_KEY outside the sandbox`)
    }
    return parseKeyring(readFileSync(file, "utf8").trim())
  })

/**
 * SHUTDOWN_GRACE_MS (default 10000): after SIGTERM/SIGINT, how long in-flight requests may finish
 * before they are cut (http/server/NodeEdge.ts drains), and the job workers' jobs in hand before they are
 * failed, to be retried (layers/jobs/JobEnginePgBoss.ts); the process then exits 0.
 */
const loadShutdownGrace = Effect.suspend(() => {
  const raw = process.env.SHUTDOWN_GRACE_MS
  if (raw === undefined || raw.trim() === "") return Effect.succeed(defaultServerLimits.shutdownGraceMs)
  const ms = Number(raw)
  return Number.isInteger(ms) && ms >= 0 && ms <= 600_000
    ? Effect.succeed(ms)
    : Effect.fail(new ConfigInvalid({ message: `SHUTDOWN_GRACE_MS: expected whole milliseconds from 0 to 600000, got ${raw}` }))
})

/**
 * A last resort after a signal: both drains (requests, jobs in hand) are bounded by the grace and
 * the rest takes milliseconds, but another finalizer (a database pool, the job engine) could still
 * hang; the process ends 5 s after the grace anyway, skipping what has not run (pg-boss's stop, the
 * database's close): a line on stderr says so, which the shutdown tests treat as a failure.
 */
const exitAfterGrace = (graceMs: number) => {
  const arm = () =>
    setTimeout(() => {
      process.stderr.write(`shutdown: still running ${graceMs + 5_000} ms after the signal; exiting\n`)
      process.exit(0)
    }, graceMs + 5_000).unref()
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

/** Every configuration problem at once (one line each), not only the first. */
const loadAllConfig = Effect.gen(function*() {
  const [config, grace, feeds, forms] = yield* Effect.all(
    [loadConfig, loadShutdownGrace, readFeedsEnv, readFormsEnv].map((e) => Effect.result(e as Effect.Effect<unknown, ConfigInvalid>))
  )
  const problems = [config, grace, feeds, forms].flatMap((r) => Result.isFailure(r!) ? r.failure.message.split("\n") : [])
  if (problems.length > 0) return yield* configInvalid(problems)
  return {
    config: (config as Result.Success<Effect.Success<typeof loadConfig>, never>).success,
    shutdownGraceMs: (grace as Result.Success<number, never>).success
  }
})

const program = Effect.gen(function*() {
  const { config, shutdownGraceMs } = yield* loadAllConfig
  // A port in use is named now, not after the database has started (seconds with the embedded one).
  yield* checkPort(config).pipe(Effect.catch((line) => Effect.sync(() => {
    process.stderr.write(`${line}\n`)
    process.exit(1)
  })))
  const keyring: Keyring = config.keyring ?? (yield* sandboxKeyring(config))
  yield* Effect.logInfo(
    config.sandbox
      ? `sandbox mode: the chat platform, sources and task board are served at ${config.publicUrl}/sandbox`
      : "platform mode: talking to the configured chat platform"
  )
  yield* Effect.logInfo(
    config.role === "worker"
      ? "ROLE=worker: job workers; serving /healthz and /readyz only"
      : `ROLE=${config.role}: public URL ${config.publicUrl}; interactive docs at ${config.publicUrl}/docs`
  )
  exitAfterGrace(shutdownGraceMs)
  // Node 24: lets V8 give memory back once the process is quiet (layers/infra/MemoryReducerNudge.ts).
  return yield* Layer.launch(Layer.merge(AppLive(config, SandboxMode.of(config), keyring), MemoryReducerNudge())).pipe(
    Effect.provideService(ServerLimits, { ...defaultServerLimits, shutdownGraceMs }),
    // The jobs in hand get the same grace as the requests (both drains run at once).
    Effect.provideService(JobDrainTimeout, Duration.millis(shutdownGraceMs)),
    // An unreachable database, a port taken meanwhile: one line naming the variable, no stack.
    Effect.catch((e: unknown) => {
      const line = describeStartupFailure(e, config)
      return line === undefined ? Effect.fail(e) : Effect.sync(() => {
        process.stderr.write(`${line}\n`)
        process.exit(1)
      })
    })
  )
})

// Any case (`info`, `INFO`); a bad value is reported by loadConfig, with Info meanwhile.
const logLevel = parseLogLevel(process.env.LOG_LEVEL ?? "Info") ?? "Info"
const logger = process.env.LOG_FORMAT === "pretty" ? Logger.consolePretty() : Logger.consoleJson

const main: Effect.Effect<void, unknown> = program.pipe(
  Effect.catch((e: unknown) => {
    const { _tag, message } = e as { readonly _tag?: string; readonly message?: string }
    if (_tag === "ConfigInvalid" || _tag === "ConfigError") {
      return Effect.sync(() => {
        // One line per problem, naming the variable and what it expects; no stack.
        process.stderr.write(String(message).split("\n").map((line) => `configuration error: ${line}\n`).join(""))
        process.exit(2)
      })
    }
    if (_tag === "RedisError") {
      // At start an unreachable Redis is fatal (a misconfiguration); once running, its outages only admit requests.
      return Effect.sync(() => {
        process.stderr.write(`start-up error: REDIS_URL: Redis is unreachable (${String((e as { cause?: unknown }).cause ?? message)})\n`)
        process.exit(1)
      })
    }
    return Effect.fail(e)
  }),
  Effect.tapCause((cause) => Effect.logError("start-up failed", cause)),
  Effect.provide(Logger.layer([logger])),
  Effect.provideService(References.MinimumLogLevel, logLevel)
)

main.pipe(
  NodeRuntime.runMain({
    // SIGTERM/SIGINT interrupt the program: in-flight requests finish, the database closes, exit 0.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Exit.hasInterrupts(exit) && !Exit.hasFails(exit) ? 0 : 1)
  })
)
