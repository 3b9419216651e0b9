/**
 * The bots' applications as the interactions endpoint reads them: every interaction needs its bot's
 * public key (and the form runtime its bot id), so a found application is kept for TTL_MS instead of
 * one query per request. A key reset on the platform is seen at once: a signature the kept key
 * refuses is checked again against the stored one (`fresh`). A bot removed meanwhile is still
 * known here for at most TTL_MS (its forms are gone: the member is told so).
 *
 * Concurrent reads of an application that is not kept share one query (Effect's `Cache`): when a
 * form opens on a fresh process, or the kept entry expires, the members' interactions that arrive
 * together made one query each on the main pool, shared with the feeds' polling, before any of them
 * could be answered. An unknown application and a failed read are not kept.
 *
 * `fresh` reads again at most once per FRESH_MIN_MS for an application: anyone can send requests
 * with a well-formed, current but forged signature, and each one made a read on the main pool and
 * dropped the kept key of a live bot. A key reset is still seen at the first refused signature after
 * it, unless another one made a read in the FRESH_MIN_MS before.
 */
import { Cache, Clock, Duration, Effect, Exit } from "effect"
import type { BotApplications } from "../../services/submissions/BotApplications.ts"

export const TTL_MS = 30_000
export const FRESH_MIN_MS = 1_000
const MAX_ENTRIES = 10_000

export const cachedApplications = (apps: BotApplications["Service"], ttlMs = TTL_MS, maxEntries = MAX_ENTRIES) =>
  Effect.gen(function*() {
    const ttl = Duration.millis(ttlMs)
    const cache = yield* Cache.makeWith((applicationId: string) => apps.byApplication(applicationId), {
      capacity: maxEntries,
      timeToLive: (exit) => Exit.isSuccess(exit) && exit.value !== undefined ? ttl : Duration.zero
    })
    const byApplication = (applicationId: string) => Cache.get(cache, applicationId)
    /** When `fresh` last read each application again. */
    const readAgainAt = new Map<string, number>()
    /**
     * The stored application, read again (and kept again) unless it was within FRESH_MIN_MS: then
     * the kept one. Concurrent calls share the read.
     */
    const fresh = (applicationId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const last = readAgainAt.get(applicationId)
        // Stryker disable next-line ConditionalExpression: equivalent, now - undefined is NaN, never below FRESH_MIN_MS
        if (last !== undefined && now - last < FRESH_MIN_MS) return byApplication(applicationId)
        if (readAgainAt.size >= maxEntries) readAgainAt.clear()
        readAgainAt.set(applicationId, now)
        return Effect.andThen(Cache.invalidate(cache, applicationId), byApplication(applicationId))
      })
    return { byApplication, fresh }
  })
