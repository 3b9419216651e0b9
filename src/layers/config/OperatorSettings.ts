/**
 * What the operator CLI (src/cli.ts) reads of the configuration before, or without, the whole of it
 * (a command that opens the database reads AppConfig strictly; `--help` and a mistyped command line
 * read nothing else): the log level of its run, whether a failure shows its full cause, and where
 * the database is for an error line. Lenient: a bad or missing value reads as the default.
 */
import { Config, Effect } from "effect"
import type { LogLevel } from "effect"

export interface OperatorSettingsShape {
  /** LOG_LEVEL, any case; by default Error (operators see their answer and errors, not the services' warnings). */
  readonly logLevel: LogLevel.LogLevel
  /** LOG_LEVEL=trace, debug or all: a failure's full cause after its line. */
  readonly verbose: boolean
  /** `postgres://user:secret@db:5432/app` → `DATABASE_URL (db:5432/app)`: where, without credentials. */
  readonly databaseAt: string
}

const LEVELS = { trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", warning: "Warn", error: "Error", all: "All" } as const

const lenient = (name: string) => Config.String(name).pipe(Config.withDefault(""), Effect.orElseSucceed(() => ""))

const databaseAt = (url: string, dataDir: string) => {
  if (url.trim() === "") return `the embedded database in ${dataDir === "" ? "./.data" : dataDir}`
  try {
    const u = new URL(url)
    return `DATABASE_URL (${u.hostname}${u.port === "" ? "" : `:${u.port}`}${u.pathname})`
  } catch {
    return "DATABASE_URL"
  }
}

export const operatorSettings: Effect.Effect<OperatorSettingsShape> = Effect.all([lenient("LOG_LEVEL"), lenient("DATABASE_URL"), lenient("DATA_DIR")]).pipe(
  Effect.map(([level, url, dataDir]) => {
    const lower = level.toLowerCase()
    return {
      logLevel: lower in LEVELS ? LEVELS[lower as keyof typeof LEVELS] : "Error",
      verbose: /^(trace|debug|all)$/i.test(level),
      databaseAt: databaseAt(url, dataDir)
    }
  })
)
