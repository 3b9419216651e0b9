/**
 * The time placeholders through `render`: UTC, ISO, IANA zones (with summer time), offsets in every
 * accepted spelling, and zones that are not zones (they stay as written). The time is the item's own.
 */
import { describe, expect, it } from "vitest"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import { render } from "../../src/services/delivery/render/Render.ts"
import { formatTimestamp, offsetMinutes } from "../../src/services/delivery/render/Timestamp.ts"
import { AT, rss, streaming } from "./ItemFixtures.ts"

/** The header's value, without the appended URL. */
const stamp = (item: Item, header: string) => render(item, { custom_header: `${header}%url%` }).content.replace(item.url, "")

describe("time placeholders (item published 2024-05-01 12:34:56.789 UTC)", () => {
  it.each([
    ["%timestamp%", "2024-05-01 12:34:56 (UTC)"],
    ["%timestamp_utc%", "2024-05-01 12:34:56 (UTC)"],
    ["%timestamp_UTC%", "2024-05-01 12:34:56 (UTC)"],
    ["%timestamp_iso%", "2024-05-01T12:34:56Z"],
    ["%timestamp_Europe/London%", "2024-05-01 13:34:56 (Europe/London)"],
    ["%timestamp_europe/london%", "2024-05-01 13:34:56 (europe/london)"],
    ["%timestamp_America/New_York%", "2024-05-01 08:34:56 (America/New_York)"],
    ["%timestamp_Asia/Kolkata%", "2024-05-01 18:04:56 (Asia/Kolkata)"],
    ["%timestamp_America/Argentina/Buenos_Aires%", "2024-05-01 09:34:56 (America/Argentina/Buenos_Aires)"],
    ["%timestamp_Pacific/Kiritimati%", "2024-05-02 02:34:56 (Pacific/Kiritimati)"],
    ["%timestamp_+0800%", "2024-05-01 20:34:56 (+0800)"],
    ["%timestamp_+08:00%", "2024-05-01 20:34:56 (+08:00)"],
    ["%timestamp_-0330%", "2024-05-01 09:04:56 (-0330)"],
    ["%timestamp_+5%", "2024-05-01 17:34:56 (+5)"],
    ["%timestamp_UTC+2%", "2024-05-01 14:34:56 (UTC+2)"],
    ["%timestamp_UTC-03:30%", "2024-05-01 09:04:56 (UTC-03:30)"],
    ["%timestamp_utc+5:45%", "2024-05-01 18:19:56 (utc+5:45)"],
    ["%timestamp_GMT-5%", "2024-05-01 07:34:56 (GMT-5)"],
    ["%timestamp_+14%", "2024-05-02 02:34:56 (+14)"],
    ["%timestamp_+15%", "%timestamp_+15%"],
    ["%timestamp_+0860%", "%timestamp_+0860%"],
    ["%timestamp_Mars/Olympus_Mons%", "%timestamp_Mars/Olympus_Mons%"],
    ["%timestamp_Europe/Londn%", "%timestamp_Europe/Londn%"],
    ["%timestamp_%", "%timestamp_%"],
    ["%timestampiso%", "%timestampiso%"],
    ["%timestamp_iso% %timestamp_+0800% %timestamp%", "2024-05-01T12:34:56Z 2024-05-01 20:34:56 (+0800) 2024-05-01 12:34:56 (UTC)"]
  ] as const)("%s", (header, expected) => {
    expect(stamp(rss(), header)).toBe(expected)
  })

  it("winter time in an IANA zone, and a day boundary crossed by an offset", () => {
    const newYearsEve = rss({ publishedAt: new Date("2024-12-31T20:00:00Z") })
    expect(stamp(newYearsEve, "%timestamp_Europe/London%")).toBe("2024-12-31 20:00:00 (Europe/London)")
    expect(stamp(newYearsEve, "%timestamp_+0800%")).toBe("2025-01-01 04:00:00 (+0800)")
    expect(stamp(newYearsEve, "%timestamp_America/Los_Angeles%")).toBe("2024-12-31 12:00:00 (America/Los_Angeles)")
  })

  it("a stream's offline event shows when the stream started, not when it ended", () => {
    const offline = streaming({ event: "offline", publishedAt: AT, eventAt: new Date("2024-05-01T18:00:00Z") })
    expect(stamp(offline, "%timestamp%")).toBe("2024-05-01 12:34:56 (UTC)")
  })

  it("an unknown zone next to a known placeholder", () => {
    expect(stamp(rss(), "%timestamp_Nowhere%title%")).toBe("%timestamp_NowhereHello world")
  })
})

describe("formatTimestamp and offsetMinutes", () => {
  it.each([
    ["+0800", 480], ["-0330", -210], ["UTC+2", 120], ["GMT-12", -720], ["+14:00", 840], ["-00:30", -30],
    ["+1401", undefined], ["+24", undefined], ["0800", undefined], ["UTC", undefined], ["+8:5", undefined]
  ] as const)("offset %s → %s", (zone, minutes) => {
    expect(offsetMinutes(zone)).toBe(minutes)
  })

  it("an invalid date shows Unknown, an unknown zone stays unknown", () => {
    expect(formatTimestamp(new Date(Number.NaN), "")).toBe("Unknown")
    expect(formatTimestamp(new Date(Number.NaN), "_Europe/London")).toBe("Unknown")
    expect(formatTimestamp(new Date(Number.NaN), "_Nowhere")).toBeUndefined()
  })
})
