/**
 * The crosspost budget of an announcement channel as a pure rule (CrosspostBudget.ts, delivery.md
 * §10 `crosspost`): 10 slots in any rolling hour, all of a delivery's slots or none, when the next
 * free up; the reason over it; what a crosspost's failure means.
 */
import { describe, expect, it } from "vitest"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { BudgetDecision, CrosspostSlots } from "../../src/services/delivery/CrosspostBudget.ts"
import {
  CROSSPOST_WINDOW_MS,
  CROSSPOSTS_PER_WINDOW,
  crosspostFailure,
  decideCrosspost,
  overBudgetReason
} from "../../src/services/delivery/CrosspostBudget.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"

const NOW = new Date("2024-05-02T12:00:00.000Z")
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000)
const inAnHour = (d: Date) => new Date(d.getTime() + 3_600_000)
/** One slot taken `m` minutes ago for each `m`. */
const ones = (...ms: ReadonlyArray<number>): ReadonlyArray<CrosspostSlots> => ms.map((m) => ({ at: minutesAgo(m), slots: 1 }))

describe("decideCrosspost: does a delivery's publication fit the channel's hour?", () => {
  const TABLE: ReadonlyArray<{
    readonly name: string
    readonly taken: ReadonlyArray<CrosspostSlots>
    readonly wanted: number
    readonly expected: BudgetDecision
  }> = [
    { name: "an empty channel: one message", taken: [], wanted: 1, expected: { _tag: "Granted", left: 9 } },
    { name: "an empty channel: a split of three", taken: [], wanted: 3, expected: { _tag: "Granted", left: 7 } },
    { name: "the whole budget at once", taken: [], wanted: 10, expected: { _tag: "Granted", left: 0 } },
    { name: "more than the whole budget: never", taken: [], wanted: 11, expected: { _tag: "OverBudget", freeAt: null } },
    {
      name: "the whole budget with one slot taken: once that one leaves",
      taken: ones(20),
      wanted: 10,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(20)) }
    },
    { name: "nothing asked", taken: ones(1, 2), wanted: 0, expected: { _tag: "Granted", left: 8 } },
    { name: "the 10th", taken: ones(1, 2, 3, 4, 5, 6, 7, 8, 9), wanted: 1, expected: { _tag: "Granted", left: 0 } },
    {
      name: "the 11th: free when the oldest (given out of order) leaves the hour",
      taken: ones(5, 40, 1, 2, 3, 50, 4, 6, 7, 8),
      wanted: 1,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(50)) }
    },
    {
      name: "a split of three with two free: one more has to leave",
      taken: ones(10, 20, 30, 40, 50, 55, 58, 59),
      wanted: 3,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(59)) }
    },
    {
      name: "a split of three with one free: two have to leave, in their order",
      taken: ones(10, 20, 30, 40, 50, 55, 58, 59, 12),
      wanted: 3,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(58)) }
    },
    {
      name: "several slots per reservation: the oldest frees three at once",
      taken: [{ at: minutesAgo(30), slots: 3 }, { at: minutesAgo(45), slots: 3 }, { at: minutesAgo(20), slots: 3 }, { at: minutesAgo(10), slots: 1 }],
      wanted: 3,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(45)) }
    },
    {
      name: "four wanted with none free: the two oldest of three each",
      taken: [{ at: minutesAgo(30), slots: 3 }, { at: minutesAgo(45), slots: 3 }, { at: minutesAgo(20), slots: 3 }, { at: minutesAgo(10), slots: 1 }],
      wanted: 4,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(30)) }
    },
    {
      name: "the hour is rolling: a slot taken exactly an hour ago is free again",
      taken: [...ones(1, 2, 3, 4, 5, 6, 7, 8, 9), { at: new Date(NOW.getTime() - CROSSPOST_WINDOW_MS), slots: 1 }],
      wanted: 1,
      expected: { _tag: "Granted", left: 0 }
    },
    {
      name: "a millisecond short of an hour it still counts",
      taken: [...ones(1, 2, 3, 4, 5, 6, 7, 8, 9), { at: new Date(NOW.getTime() - CROSSPOST_WINDOW_MS + 1), slots: 1 }],
      wanted: 1,
      expected: { _tag: "OverBudget", freeAt: new Date(NOW.getTime() + 1) }
    },
    {
      name: "old reservations are ignored, however many",
      taken: [...ones(61, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160), { at: minutesAgo(30), slots: 2 }],
      wanted: 3,
      expected: { _tag: "Granted", left: 5 }
    },
    {
      name: "a reservation dated after now (another worker's clock) counts",
      taken: [{ at: new Date(NOW.getTime() + 60_000), slots: 3 }, ...ones(1, 2, 3, 4, 5, 6, 7)],
      wanted: 1,
      expected: { _tag: "OverBudget", freeAt: inAnHour(minutesAgo(7)) }
    }
  ]
  for (const row of TABLE) {
    it(row.name, () => {
      expect(decideCrosspost(row.taken, row.wanted, NOW)).toStrictEqual(row.expected)
    })
  }

  it("the platform's numbers: 10 a channel, an hour", () => {
    expect([CROSSPOSTS_PER_WINDOW, CROSSPOST_WINDOW_MS]).toStrictEqual([10, 3_600_000])
  })

  it("does not reorder the caller's list", () => {
    const taken = ones(3, 1, 2)
    decideCrosspost(taken, 1, NOW)
    expect(taken.map((t) => t.at)).toStrictEqual([minutesAgo(3), minutesAgo(1), minutesAgo(2)])
  })
})

describe("overBudgetReason", () => {
  it("names the channel, the limit and when the next could be published", () => {
    expect(overBudgetReason("310000000000000104", new Date("2024-05-02T12:34:56.000Z"))).toBe(
      "channel 310000000000000104 had published its 10 messages of the hour (the platform's limit); the next could be published from 2024-05-02T12:34:56.000Z"
    )
  })
  it("more than the whole budget: says so", () => {
    expect(overBudgetReason("310000000000000104", null)).toBe("its messages are more than the 10 the platform publishes per channel per hour")
  })
})

describe("crosspostFailure: what a failed publication means", () => {
  const rejected = (status: number, message: string, code?: number) =>
    code === undefined ? new PlatformRejected({ status, message }) : new PlatformRejected({ status, message, code })
  const TABLE = [
    { name: "already published (40033): counts as published", error: rejected(400, "This message has already been crossposted.", 40033), expected: { _tag: "Published" } },
    {
      name: "another 400 (50024, not an announcement channel any more)",
      error: rejected(400, "Cannot execute action on this channel type", 50024),
      expected: { _tag: "NotPublished", reason: "the chat platform refused to publish it (400 Cannot execute action on this channel type, code 50024)" }
    },
    {
      name: "a 400 without Discord's code",
      error: rejected(400, "Bad Request"),
      expected: { _tag: "NotPublished", reason: "the chat platform refused to publish it (400)" }
    },
    {
      name: "a code 40033 with another status is not 'published'",
      error: rejected(403, "Missing Permissions", 40033),
      expected: {
        _tag: "NotPublished",
        reason: "the bot may not publish in the webhook's channel (403 Missing Permissions, code 40033): give it MANAGE_MESSAGES there, or set crosspost to false"
      }
    },
    {
      name: "403 the bot lost MANAGE_MESSAGES",
      error: rejected(403, "Missing Permissions", 50013),
      expected: {
        _tag: "NotPublished",
        reason: "the bot may not publish in the webhook's channel (403 Missing Permissions, code 50013): give it MANAGE_MESSAGES there, or set crosspost to false"
      }
    },
    {
      name: "404 the message was deleted",
      error: rejected(404, "Unknown Message", 10008),
      expected: { _tag: "NotPublished", reason: "the message or its channel is gone (404 Unknown Message, code 10008)" }
    },
    {
      name: "a 429 answered as a refusal",
      error: rejected(429, "You are being rate limited."),
      expected: { _tag: "NotPublished", reason: "the chat platform refused to publish it (429)" }
    },
    {
      name: "the client's 503 (a 429 longer than it waits, a 5xx)",
      error: ServiceUnavailable.of("The chat platform is rate limiting the gateway (route x); try again later.", 3000),
      expected: { _tag: "NotPublished", reason: "the chat platform did not publish it: The chat platform is rate limiting the gateway (route x); try again later." }
    },
    {
      name: "no answer",
      error: RequestTimeout.of("The chat platform did not answer within 10 seconds."),
      expected: { _tag: "NotPublished", reason: "the chat platform did not publish it: The chat platform did not answer within 10 seconds." }
    },
    {
      name: "an outage without a message: its tag",
      error: new ServiceUnavailable({ problems: [] }),
      expected: { _tag: "NotPublished", reason: "the chat platform did not publish it: ServiceUnavailable" }
    }
  ] as const
  for (const row of TABLE) {
    it(row.name, () => {
      expect(crosspostFailure(row.error)).toStrictEqual(row.expected)
    })
  }
})
