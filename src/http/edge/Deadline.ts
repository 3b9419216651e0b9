/** The request deadline of the global middleware (Envelope.ts) and the push hooks (Hooks.ts). */
import { Effect, Fiber } from "effect"

/**
 * `self`, or `onTimeout()` once `ms` have passed (`self` is then interrupted first). Cheaper than
 * `Effect.timeoutOrElse` on the hot path: one child fiber and a plain timer, where the race forks two
 * fibers and schedules a `sleep` through the clock for every request.
 *
 * The wait is interruptible although the router runs middleware uninterruptibly (only the handler is
 * made interruptible, and here the handler is the child): a request cut by the drain at shutdown or
 * by its client going away ends at once, its handler interrupted first, then `onCut`. (Before, the
 * cut waited for the deadline, and the shutdown with it, until main.ts's last resort ended the process.)
 */
export const withDeadline = <A, R>(
  self: Effect.Effect<A, never, R>,
  ms: number,
  onTimeout: () => A,
  onCut?: () => Effect.Effect<void>
): Effect.Effect<A, never, R> =>
  Effect.flatMap(Effect.forkChild(self, { startImmediately: true }), (fiber) => {
    const done = fiber.pollUnsafe()
    if (done !== undefined) return done
    return Effect.interruptible(Effect.callback<A>((resume) => {
      const timer = setTimeout(() => resume(Effect.as(Fiber.interrupt(fiber), onTimeout())), ms)
      const detach = fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(exit)
      })
      return Effect.suspend(() => {
        clearTimeout(timer)
        detach()
        return onCut === undefined ? Fiber.interrupt(fiber) : Effect.andThen(Fiber.interrupt(fiber), onCut())
      })
    }))
  })
