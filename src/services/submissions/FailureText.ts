/**
 * A platform call's failure in a line, for the reason kept on a submission's effect: a refusal's
 * status, code and message; an outage's or a time-out's own problem text (those errors carry their
 * words in `problems`, and their `message` is empty).
 */
import { PlatformRejected } from "../platform/ChatPlatform.ts"

export const failureText = (e: unknown): string => {
  if (e instanceof PlatformRejected) return `${e.status}${e.code === undefined ? "" : ` ${e.code}`}: ${e.message}`
  const problems = typeof e === "object" && e !== null && "problems" in e && Array.isArray(e.problems) ? e.problems as ReadonlyArray<{ readonly message?: unknown }> : []
  const text = problems.map((p) => String(p.message ?? "")).filter((m) => m !== "").join(" ")
  return text !== "" ? text : e instanceof Error && e.message !== "" ? e.message : String(e)
}
