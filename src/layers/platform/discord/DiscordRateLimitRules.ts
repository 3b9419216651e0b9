/**
 * The arithmetic of the chat platform's rate limits, free of state: what a call is keyed by, how a
 * 429 reads (body or headers), the 503 a call that waits too long answers, and the budgets the
 * options give (the global per-token bucket, the invalid-request bucket, the wait budget).
 * DiscordRateLimits.ts holds the state (buckets, pauses) and the layer.
 */
import { createHash } from "node:crypto"
import { Duration } from "effect"
import { ServiceUnavailable } from "../../../domain/infra/Errors.ts"

export interface DiscordRateLimitsOptions {
  /** Requests per second per token (Discord's global limit is 50). Default 50. */
  readonly globalPerSecond?: number | undefined
  /** Longest a call may wait in total for buckets, the global budget and 429s. Default 15 s. */
  readonly waitBudget?: Duration.Input | undefined
  /** Invalid answers (401/403/429) per 10 minutes after which nothing is sent. Default 5,000. */
  readonly invalidRequestLimit?: number | undefined
  /** Prefix of the keys in the shared store. Default `discord:`. */
  readonly keyPrefix?: string | undefined
}

/** Where a request goes, for rate limiting. Never holds a raw token. */
export interface RouteTarget {
  /** `bot:<hash>`, `user:<hash>`, `app:<client id>` or `anon`. */
  readonly identity: string
  /** Method and path template, e.g. `GET /guilds/:guild/channels`. */
  readonly route: string
  /** The major parameter (guild id, channel id, webhook id + token hash), or "". */
  readonly major: string
  /**
   * The request's order among its bucket's requests does not matter (a review message, a summary): once
   * the bucket's window is known, up to its `remaining` are sent at once rather than one after another.
   * Absent: in order (a feed's webhook posts keep their items' order).
   */
  readonly unordered?: true | undefined
}

/** One upstream answer, body read. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
}

// Stryker disable next-line MethodExpression,StringLiteral: the hash only keys per-token state (buckets, caches); any stable digest of the token keeps tokens apart
export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex").slice(0, 32)

export const parseNumber = (value: string | undefined): number | undefined => {
  // An absent header is Number(undefined), NaN: not a number like any other junk.
  const n = Number(value)
  return Number.isFinite(n) ? n : undefined
}

/** `retry_after` (seconds, float) and `global` of a 429, from the body or else the headers. */
export const parse429 = (answer: Answer): { readonly retryAfterMs: number; readonly global: boolean } => {
  let retryAfter: number | undefined
  let global = answer.headers["x-ratelimit-global"] === "true" || answer.headers["x-ratelimit-scope"] === "global"
  try {
    const body: unknown = JSON.parse(answer.body)
    // Stryker disable next-line ConditionalExpression,LogicalOperator: on a non-object body the `in` checks throw, and the catch below answers the same as this guard (the headers)
    if (typeof body === "object" && body !== null) {
      if ("retry_after" in body && typeof body.retry_after === "number") retryAfter = body.retry_after
      if ("global" in body && body.global === true) global = true
    }
  } catch {
    // Cloudflare-level 429s may not be JSON; fall back to the headers.
  }
  retryAfter ??= parseNumber(answer.headers["x-ratelimit-reset-after"]) ?? parseNumber(answer.headers["retry-after"]) ?? 1
  return { retryAfterMs: Math.max(0, Math.ceil(retryAfter * 1000)), global }
}

export const tooLong = (what: string, waitMs: number) =>
  ServiceUnavailable.of(
    `The chat platform is rate limiting the gateway (${what}); try again later.`,
    Math.max(1, Math.ceil(waitMs / 1000))
  )

/** The numbers the options give; every call of one layer shares them. */
export const limitsOf = (options: DiscordRateLimitsOptions) => {
  const budgetMs = Duration.toMillis(Duration.fromInputUnsafe(options.waitBudget ?? "15 seconds"))
  const prefix = options.keyPrefix ?? "discord:"
  const perSecond = Math.max(1, options.globalPerSecond ?? 50)
  const invalidLimit = Math.max(1, options.invalidRequestLimit ?? 5000)
  // At most perSecond sends in any 1.2 s (a sliding log, DiscordGlobalBudget.ts): under the limit in
  // every 1 s window even when sends are late by up to 200 ms (timer lateness, network jitter), and a
  // burst of perSecond goes at once.
  const globalWindowMs = 1200
  // A token bucket of capacity L/2 refilled by L/2 per 10 minutes admits at most L in any 10 minutes.
  const invalidBucket = {
    key: `${prefix}invalid`,
    // Stryker disable next-line StringLiteral: Effect's fixed-window store also drains by window/limit per token, so both algorithms admit the same here
    algorithm: "token-bucket",
    onExceeded: "fail",
    limit: Math.max(1, Math.floor(invalidLimit / 2)),
    window: "10 minutes"
  } as const
  return { budgetMs, prefix, globalLimit: perSecond, globalWindowMs, invalidBucket }
}

// 429s with retry_after 0 must not spin: give up after this many attempts even within the budget.
export const maxAttempts = 10
