/**
 * Start-up failures as one line naming the variable to fix: an unreachable or refusing database
 * (DATABASE_URL, shown without its password), a port that cannot be listened on (PORT/HOST).
 */
import { Effect, Redacted } from "effect"
import { createServer } from "node:net"
import type { AppConfigShape } from "./AppConfig.ts"

/** `postgres://user:secret@host:5432/db` → `postgres://user@host:5432/db`: never the password. */
export const withoutPassword = (url: string): string => {
  if (!URL.canParse(url)) return "(not a URL)"
  const u = new URL(url)
  u.password = ""
  u.search = ""
  return u.toString()
}

/** The innermost message of an error's `cause` chain (`connect ECONNREFUSED 127.0.0.1:1`). */
const innermost = (e: unknown): string => {
  let message = ""
  let current: unknown = e
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const m = (current as { readonly message?: unknown }).message
    if (typeof m === "string" && m.trim() !== "") message = m
    current = (current as { readonly cause?: unknown }).cause
  }
  return message.split("\n")[0]!.trim()
}

const scrub = (text: string, config: AppConfigShape) => {
  if (config.databaseUrl === undefined) return text
  const raw = Redacted.value(config.databaseUrl)
  const password = URL.canParse(raw) ? decodeURIComponent(new URL(raw).password) : ""
  return password === "" ? text : text.split(password).join("***")
}

/** The one line for a start-up failure we can name, or undefined (then it is logged with its cause). */
export const describeStartupFailure = (e: unknown, config: AppConfigShape): string | undefined => {
  const tag = typeof e === "object" && e !== null ? (e as { readonly _tag?: unknown })._tag : undefined
  if (tag === "SqlError" || tag === "MigrationError" || tag === "PgliteError") {
    const reason = (e as { readonly reason?: { readonly _tag?: string } }).reason?._tag
    const why = `${reason === undefined ? "" : `${reason}: `}${innermost(e)}`
    return config.databaseUrl === undefined
      ? `start-up error: the embedded database in DATA_DIR=${config.dataDir} failed (${why}); set DATA_DIR or DATABASE_URL`
      : scrub(`start-up error: DATABASE_URL: cannot use the database at ${withoutPassword(Redacted.value(config.databaseUrl))} (${why})`, config)
  }
  if (tag === "ServeError") return portLine(config, innermost(e))
  // The embedded database's folder is another process's (layers/infra/DataDirLock.ts): its message names DATA_DIR.
  if (tag === "DataDirInUse") return `start-up error: ${(e as Error).message}`
  return undefined
}

const portLine = (config: AppConfigShape, why: string) =>
  `start-up error: PORT/HOST: cannot listen on ${config.host}:${config.port} (${why}); choose another PORT or stop what uses it`

/**
 * Whether PORT on HOST can be listened on, tried before the database and the job engine start
 * (an embedded database takes seconds; the port's answer should not wait for it).
 */
export const checkPort = (config: AppConfigShape): Effect.Effect<void, string> =>
  Effect.callback<void, string>((resume) => {
    const probe = createServer()
    probe.once("error", (err: NodeJS.ErrnoException) => {
      resume(Effect.fail(portLine(config, err.code === "EADDRINUSE" ? "address already in use" : err.message)))
    })
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => {
      probe.close(() => resume(Effect.void))
    })
  })
