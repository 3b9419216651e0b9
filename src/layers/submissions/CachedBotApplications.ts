/**
 * The bots' applications as the interactions endpoint reads them: every interaction needs its bot's
 * public key (and the form runtime its bot id), so a found application is kept for TTL_MS instead of
 * one query per request. A key reset on the platform is seen at once: a signature the kept key
 * refuses is checked again against the stored one (`fresh`). A bot removed meanwhile is still
 * known here for at most TTL_MS (its forms are gone: the member is told so).
 */
import { Effect } from "effect"
import type { BotApplication, BotApplications } from "../../services/submissions/BotApplications.ts"

export const TTL_MS = 30_000
const MAX_ENTRIES = 10_000

export const cachedApplications = (apps: BotApplications["Service"], ttlMs = TTL_MS) => {
  const kept = new Map<string, { readonly app: BotApplication; readonly until: number }>()
  const fresh = (applicationId: string) =>
    Effect.tap(apps.byApplication(applicationId), (app) =>
      Effect.sync(() => {
        if (app === undefined) return kept.delete(applicationId)
        if (kept.size >= MAX_ENTRIES) kept.clear()
        kept.set(applicationId, { app, until: Date.now() + ttlMs })
      }))
  const byApplication = (applicationId: string) =>
    Effect.suspend(() => {
      const entry = kept.get(applicationId)
      return entry !== undefined && entry.until > Date.now() ? Effect.succeed<BotApplication | undefined>(entry.app) : fresh(applicationId)
    })
  return { byApplication, fresh }
}
