/**
 * How many forms one member may start (forms-runtime.md §2): more than START_LIMIT starts in a
 * minute → "Slow down" for the rest of that minute. A fixed window that the member's first start
 * opens: it ends START_WINDOW_MS later, whatever came after. (Effect's "fixed-window" limiter adds
 * window ÷ limit to the window at each request, so one start, a pause of 6 s and ten more went
 * through: 11 starts in 8 s.)
 */
import { Context } from "effect"
import type { Effect } from "effect"

export const START_LIMIT = 10
export const START_WINDOW_MS = 60_000
/** Windows one instance keeps in memory at most; past it the ended ones go, then all. */
export const MAX_WINDOWS = 100_000

export class StartLimit extends Context.Service<StartLimit, {
  /** Counts a start under `key`: whether it is within the limit. Never fails: an unreachable store counts in memory. */
  readonly admit: (key: string) => Effect.Effect<boolean>
  // Stryker disable next-line StringLiteral: equivalent, the service's key (one service of this name)
}>()("gateway/StartLimit") {}

/** A fixed-window counter in memory: `count(key, now)` counts one start and says whether it is admitted. */
export const windowCounter = (limit = START_LIMIT, windowMs = START_WINDOW_MS, maxWindows = MAX_WINDOWS) => {
  const windows = new Map<string, { count: number; readonly endsAt: number }>()
  const count = (key: string, now: number): boolean => {
    let w = windows.get(key)
    if (w === undefined || w.endsAt <= now) {
      if (windows.size >= maxWindows) {
        for (const [k, v] of windows) if (v.endsAt <= now) windows.delete(k)
        if (windows.size >= maxWindows) windows.clear()
      }
      w = { count: 0, endsAt: now + windowMs }
      windows.set(key, w)
    }
    w.count++
    return w.count <= limit
  }
  return { count, size: () => windows.size }
}
