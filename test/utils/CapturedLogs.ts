/**
 * Logs a test expects (an outage it provokes, a refusal it asks for) kept instead of printed, so
 * that a WARN or ERROR in the suite's output is one nobody expected (issue 13 item 9). Provide
 * `CapturedLogs.layer` to the tests (or to the layer that logs): every line logged under it is
 * collected, none reaches the console; `CapturedLogs.lines` reads them for an assertion.
 */
import { Cause, Context, Effect, Layer, Logger, References } from "effect"

export interface LogLine {
  /** "Warn", "Error"… */
  readonly level: string
  /** The message (parts joined by a space) and the cause, if any. */
  readonly text: string
  /** The line's annotations (`Effect.annotateLogs`), as a JSON logger would write them. */
  readonly annotations: Readonly<Record<string, unknown>>
}

export class CapturedLogs extends Context.Service<CapturedLogs, {
  readonly lines: Effect.Effect<ReadonlyArray<LogLine>>
  /** The lines so far, and forgets them. */
  readonly take: Effect.Effect<ReadonlyArray<LogLine>>
}>()("test/CapturedLogs") {
  static readonly layer: Layer.Layer<CapturedLogs> = Layer.unwrap(Effect.sync(() => {
    const lines: Array<LogLine> = []
    const logger = Logger.make(({ cause, fiber, logLevel, message }) => {
      const parts = (Array.isArray(message) ? message : [message]).map((m) => typeof m === "string" ? m : JSON.stringify(m))
      if (cause.reasons.length > 0) parts.push(Cause.pretty(cause))
      lines.push({ level: logLevel, text: parts.join(" "), annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
    })
    return Layer.merge(
      Logger.layer([logger]),
      Layer.succeed(CapturedLogs, CapturedLogs.of({
        lines: Effect.sync(() => [...lines]),
        take: Effect.sync(() => lines.splice(0))
      }))
    )
  }))
}

/** The captured lines at `level` or above whose text includes `text`. */
export const logged = (text: string, levels: ReadonlyArray<string> = ["Warn", "Error", "Fatal"]) =>
  CapturedLogs.use((c) => c.lines).pipe(
    Effect.map((lines) => lines.filter((l) => levels.includes(l.level) && l.text.includes(text)))
  )
