/**
 * What the panel says of a refused call (src/panel/problems.ts): a 429 names its wait once, in the
 * gateway's words when they name it, else in the panel's; a 503 the same.
 */
import { describe, expect, it } from "@effect/vitest"
import { toFailure } from "../../src/panel/problems.ts"

const refused = (tag: string, message: string, retryAfter?: number) => ({
  _tag: tag,
  problems: [{ message, ...(retryAfter === undefined ? {} : { additionalProperties: { retry_after: retryAfter } }) }]
})

describe("toFailure: the wait said once", () => {
  const rows: ReadonlyArray<readonly [string, ReturnType<typeof refused>, string]> = [
    [
      "a test message within its cool-down: the gateway's words, which name the wait",
      refused("TooManyRequests", "One test message per feed every 10 seconds; try again in 7 seconds.", 7),
      "Too many requests: One test message per feed every 10 seconds; try again in 7 seconds."
    ],
    [
      "a poll now within 60 s",
      refused("TooManyRequests", "This feed's source was refreshed less than 60 seconds ago; try again in 60 seconds.", 60),
      "Too many requests: This feed's source was refreshed less than 60 seconds ago; try again in 60 seconds."
    ],
    [
      "the API's rate limit (retry after)",
      refused("TooManyRequests", "Rate limit of 60 requests per 60 s exceeded; retry after 12 s.", 12),
      "Too many requests: Rate limit of 60 requests per 60 s exceeded; retry after 12 s."
    ],
    ["a 429 whose words do not name the wait", refused("TooManyRequests", "Slow down.", 90), "Too many requests. Slow down. Try again in 90 seconds."],
    ["a 429 without words or wait", refused("TooManyRequests", ""), "Too many requests. Try again in 60 seconds."],
    ["a 503 with a wait", refused("ServiceUnavailable", "The database is not answering.", 30), "The database is not answering. Try again in 30 seconds."],
    ["a 503 that names its wait", refused("ServiceUnavailable", "Busy; try again in 5 seconds.", 5), "Busy; try again in 5 seconds."]
  ]
  for (const [name, error, said] of rows) {
    it(name, () => {
      const failure = toFailure(error)
      expect(failure.message).toBe(said)
      expect(failure.message.match(/try again in|retry after/gi)?.length ?? 0, "the wait is said once").toBe(1)
    })
  }
})
