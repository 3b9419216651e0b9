/** Entry point: configuration, keys, logging, then the application layer until SIGTERM/SIGINT. */
import { NodeRuntime } from "@effect/platform-node"
import { Duration, Effect, Exit, Layer, References, Result } from "effect"
import { AppLive } from "./layers/App.ts"
import { SandboxMode } from "./sandbox/SandboxMode.ts"
import { JobDrainTimeout } from "./layers/jobs/JobEnginePgBoss.ts"
import { MemoryReducerNudge } from "./layers/infra/MemoryReducerNudge.ts"
import { configInvalid, loadConfig } from "./layers/config/AppConfig.ts"
import type { ConfigInvalid } from "./layers/config/AppConfig.ts"
import { keyringOf } from "./layers/config/KeyringFile.ts"
import { loggerLayer, resolveLogFormat } from "./layers/config/LogFormat.ts"
import { startupLines } from "./layers/config/StartupLines.ts"
import { readFeedsEnv } from "./layers/config/FeedsConfigEnv.ts"
import { readFormsEnv } from "./layers/config/FormsConfigEnv.ts"
import { checkPort, describeStartupFailure } from "./layers/config/StartupErrors.ts"
import { defaultServerLimits, ServerLimits } from "./http/server/NodeEdge.ts"
import type { AppConfigShape } from "./layers/config/AppConfig.ts"

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
  const [config, feeds, forms] = yield* Effect.all(
    [loadConfig, readFeedsEnv, readFormsEnv].map((e) => Effect.result(e as Effect.Effect<unknown, ConfigInvalid>))
  )
  const problems = [config, feeds, forms].flatMap((r) => Result.isFailure(r!) ? r.failure.message.split("\n") : [])
  if (problems.length > 0) return yield* configInvalid(problems)
  return (config as Result.Success<Effect.Success<typeof loadConfig>, never>).success
})

const program = (config: AppConfigShape) => Effect.gen(function*() {
  // SHUTDOWN_GRACE_MS (default 10000): after SIGTERM/SIGINT, how long in-flight requests may finish
  // before they are cut (http/server/NodeEdge.ts drains), and the job workers' jobs in hand before they
  // are failed, to be retried (layers/jobs/JobEnginePgBoss.ts); the process then exits 0.
  const shutdownGraceMs = config.shutdownGraceMs
  // A port in use is named now, not after the database has started (seconds with the embedded one).
  yield* checkPort(config).pipe(Effect.catch((line) => Effect.sync(() => {
    process.stderr.write(`${line}\n`)
    process.exit(1)
  })))
  const keyring = yield* keyringOf(config, { generate: true })
  // Where to go next: the sandbox, the docs, the panel and the sign-in (StartupLines.ts).
  for (const line of startupLines(config)) yield* Effect.logInfo(line)
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

/** A configuration problem or an unreachable Redis at start: its lines on stderr and the exit code, no stack. */
const exitOnKnown = (e: unknown) => {
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
}

// The log level (LOG_LEVEL, any case) and format (LOG_FORMAT; `auto`: pretty on a terminal, JSON
// otherwise) as AppConfig read them; nothing is logged before the configuration is read, and a bad
// value stops the start with its line.
const main: Effect.Effect<void, unknown> = loadAllConfig.pipe(
  Effect.flatMap((config) =>
    program(config).pipe(
      Effect.catch(exitOnKnown),
      Effect.tapCause((cause) => Effect.logError("start-up failed", cause)),
      Effect.provide(loggerLayer(resolveLogFormat(config.logFormat, process.stdout.isTTY === true))),
      Effect.provideService(References.MinimumLogLevel, config.logLevel)
    )
  ),
  Effect.catch(exitOnKnown)
)

main.pipe(
  NodeRuntime.runMain({
    // SIGTERM/SIGINT interrupt the program: in-flight requests finish, the database closes, exit 0.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Exit.hasInterrupts(exit) && !Exit.hasFails(exit) ? 0 : 1)
  })
)
