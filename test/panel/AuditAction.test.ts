/** The audit log's Action column (src/panel/auditAction.ts): the entry's own verb, else its event type in words. */
import { describe, expect, it } from "@effect/vitest"
import { actionOf } from "../../src/panel/auditAction.ts"

describe("actionOf", () => {
  const rows = [
    ["PUSH", `Sent a test message of rss feed 3 ("https://x.test/feed.xml") to webhook "News": item 9`, "Sent"],
    ["PUSH", `Created rss feed 3 for "https://x.test/feed.xml", posting to webhook "News" in channel 1`, "Created"],
    ["PUSH", `Created form "Applications" (#4)`, "Created"],
    ["PATCH", `Updated the options of rss feed 3 ("https://x.test/feed.xml")`, "Updated"],
    ["PATCH", `Disabled rss feed 3 ("https://x.test/feed.xml"): the webhook is gone`, "Disabled"],
    ["DELETE", `Deleted rss feed 3 ("https://x.test/feed.xml")`, "Deleted"],
    ["GET", `Viewed form "Applications" (#4)`, "Viewed"],
    ["PUSH", "submission 12 received", "Added"],
    ["PATCH", "Review of submission 12: approved", "Changed"],
    ["DELETE", "", "Removed"],
    ["GET", "Form 4", "Read"]
  ] as const
  for (const [type, text, label] of rows) {
    it(`${type} "${text.slice(0, 40)}" → ${label}`, () => expect(actionOf(type, text)).toBe(label))
  }
})
