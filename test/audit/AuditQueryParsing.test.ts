/**
 * The logs route's query (AuditQuery.ts), issue #19: what a client reads in each 400 (message and
 * path of every problem) and which spellings of a time or a number are read, and as what.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import type { AuditLogQuery } from "../../src/domain/audit/AuditLog.ts"
import { parseAuditQuery, parseTimestamp, toWire } from "../../src/services/audit/AuditQuery.ts"

/** The 400's problems as [path, message]; fails the test when the query was accepted. */
const refused = (query: AuditLogQuery) => {
  const parsed = parseAuditQuery(query)
  if (Result.isSuccess(parsed)) return assert.fail(`accepted ${JSON.stringify(query)}`)
  return parsed.failure.problems.map((p) => [p.additionalProperties?.["path"], p.message])
}
const accepted = (query: AuditLogQuery) => {
  const parsed = parseAuditQuery(query)
  if (Result.isFailure(parsed)) return assert.fail(`refused ${JSON.stringify(query)}: ${JSON.stringify(parsed.failure.problems)}`)
  return parsed.success
}

const TIME = "must be an ISO 8601 date-time or integer Unix seconds (13 digits or more: milliseconds), years 1 to 9999"

describe("parseAuditQuery: each problem's message", () => {
  it("module, start, end, page_size, page", () => {
    assert.deepStrictEqual(refused({ module: "x", start: "bad", end: "bad", page_size: "0", page: "0" }), [
      ["module", "module must be one of forms, photo, forum, rss, streaming, microblog, video"],
      ["start", `start ${TIME}`],
      ["end", `end ${TIME}`],
      ["page_size", "page_size must be an integer from 1 to 100"],
      ["page", "page must be an integer from 1 to 9007199254740991"]
    ])
  })
  it("start after end, by one millisecond", () => {
    assert.deepStrictEqual(refused({ start: "2024-01-01T00:00:00.001Z", end: "2024-01-01T00:00:00Z" }), [["start", "start must not be after end"]])
    assert.deepStrictEqual(accepted({ start: "2024-01-01T00:00:00Z", end: "2024-01-01T00:00:00.001Z" }).start, Date.UTC(2024, 0, 1))
  })
  it("only start or only end is a one-sided range", () => {
    assert.deepStrictEqual(accepted({ start: "2024-01-01" }), { module: undefined, start: Date.UTC(2024, 0, 1), end: undefined, pageSize: 10, page: 1 })
    assert.deepStrictEqual(accepted({ end: "2024-01-01" }), { module: undefined, start: undefined, end: Date.UTC(2024, 0, 1), pageSize: 10, page: 1 })
  })
  it("every module is accepted as itself", () => {
    for (const module of ["forms", "photo", "forum", "rss", "streaming", "microblog", "video"]) {
      assert.strictEqual(accepted({ module }).module, module)
    }
    assert.deepStrictEqual(refused({ module: "Forms" }).map((p) => p[0]), ["module"])
    assert.deepStrictEqual(refused({ module: "" }).map((p) => p[0]), ["module"])
  })
})

describe("parseAuditQuery: page_size and page", () => {
  it.each<[string, number]>([["1", 1], ["2", 2], ["99", 99], ["100", 100], [" 7 ", 7], ["+5", 5], ["007", 7]])("page_size=%j is %d", (raw, n) => {
    assert.strictEqual(accepted({ page_size: raw }).pageSize, n)
  })
  it.each(["0", "-1", "101", "-0", "1000"])("page_size=%j is refused", (raw) => {
    assert.deepStrictEqual(refused({ page_size: raw }).map((p) => p[0]), ["page_size"])
  })
  it.each<[string, number]>([["1", 1], ["2", 2], [" 3 ", 3], ["+4", 4], ["9007199254740991", 9007199254740991]])("page=%j is %d", (raw, n) => {
    assert.strictEqual(accepted({ page: raw }).page, n)
  })
  it.each(["0", "-1", "9007199254740992", "99999999999999999999", "", " ", "1.0", "1a", "a1"])("page=%j is refused", (raw) => {
    assert.deepStrictEqual(refused({ page: raw }), [["page", "page must be an integer from 1 to 9007199254740991"]])
  })
})

describe("parseTimestamp: spellings", () => {
  it.each<[string, string, number | undefined]>([
    ["a comma before the fraction", "2024-01-01T10:20:30,25Z", Date.UTC(2024, 0, 1, 10, 20, 30, 250)],
    ["nine fraction digits", "2024-01-01T10:20:30.123456789Z", Date.UTC(2024, 0, 1, 10, 20, 30, 123)],
    ["ten fraction digits", "2024-01-01T10:20:30.1234567890Z", undefined],
    ["a fraction that rounds up is cut, not rounded", "2024-01-01T10:20:30.9999Z", Date.UTC(2024, 0, 1, 10, 20, 30, 999)],
    ["a fraction without seconds", "2024-01-01T10:20.5", undefined],
    ["a fraction point without digits", "2024-01-01T10:20:30.Z", undefined],
    ["lower-case t and offset", "2024-01-01t10:20:30+01:00", Date.UTC(2024, 0, 1, 9, 20, 30)],
    ["a space before the time", "2024-01-01 23:59", Date.UTC(2024, 0, 1, 23, 59)],
    ["hour 23, minute 59, second 59", "2024-01-01T23:59:59", Date.UTC(2024, 0, 1, 23, 59, 59)],
    ["hour 24", "2024-01-01T24:00", undefined],
    ["minute 60", "2024-01-01T10:60:00", undefined],
    ["an hour of one digit", "2024-01-01T1:00", undefined],
    ["a year of five digits", "20240-01-01", undefined],
    ["a year of three digits", "024-01-01", undefined],
    ["a month of one digit", "2024-1-01", undefined],
    ["a day of one digit", "2024-01-1", undefined],
    ["a date without dashes", "20240101", 20_240_101_000], // an integer: Unix seconds
    ["a time zone without time", "2024-01-01Z", Date.UTC(2024, 0, 1)],
    ["an offset without time", "2024-01-01+02:00", Date.UTC(2023, 11, 31, 22)],
    ["an offset of one digit", "2024-01-01T10:00+1", undefined],
    ["an offset of hours and one minute digit", "2024-01-01T10:00+01:3", undefined],
    ["an offset with a colon and three digits", "2024-01-01T10:00+01:300", undefined],
    ["offset -00:30", "2024-01-01T10:00-00:30", Date.UTC(2024, 0, 1, 10, 30)],
    ["offset +0030", "2024-01-01T10:00+0030", Date.UTC(2024, 0, 1, 9, 30)],
    ["offset +23:00", "2024-01-01T10:00+23:00", Date.UTC(2023, 11, 31, 11)],
    ["offset +00:59", "2024-01-01T10:00+00:59", Date.UTC(2024, 0, 1, 9, 1)],
    ["offset Z", "2024-01-01T10:00Z", Date.UTC(2024, 0, 1, 10)],
    ["two zones", "2024-01-01T10:00Z+01:00", undefined],
    ["surrounding tabs and newline", "\t2024-01-01\n", Date.UTC(2024, 0, 1)],
    ["seconds with spaces around", " 1704067200 ", Date.UTC(2024, 0, 1)],
    ["seconds with a plus sign", "+1704067200", Date.UTC(2024, 0, 1)],
    ["seconds with a sign inside", "17040-67200", undefined],
    ["minus zero", "-0", 0]
  ])("%s: %s", (_name, raw, expected) => {
    assert.strictEqual(parseTimestamp(raw), expected)
  })

  it("year 0 is refused even when an offset brings the instant into year 1", () => {
    assert.strictEqual(parseTimestamp("0000-12-31T23:30:00-01:00"), undefined)
    assert.strictEqual(parseTimestamp("0001-01-01T00:30:00Z"), new Date(0).setUTCFullYear(1, 0, 1) + 30 * 60_000)
  })

  it("ISO 8601: the last millisecond of year 9999 is read, the next one is not", () => {
    const MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
    assert.strictEqual(parseTimestamp("9999-12-31T23:59:59.999Z"), MAX)
    assert.strictEqual(parseTimestamp("9999-12-31T23:59:59.999"), MAX)
    assert.strictEqual(parseTimestamp("9999-12-31T23:59:59.998Z"), MAX - 1)
    assert.strictEqual(parseTimestamp("9999-12-31T23:59:60Z"), undefined)
    assert.deepStrictEqual(accepted({ end: "9999-12-31T23:59:59.999Z" }).end, MAX)
  })

  it("month 0 and day 0 are refused even when they would roll over to a valid date", () => {
    assert.strictEqual(parseTimestamp("2024-00-31"), undefined)
    assert.strictEqual(parseTimestamp("2024-03-00"), undefined)
    assert.strictEqual(parseTimestamp("2024-02-30"), undefined)
    assert.strictEqual(parseTimestamp("2023-02-28T23:59:59Z"), Date.UTC(2023, 1, 28, 23, 59, 59))
  })

  it("years 1 to 99 are those years, not 1900 to 1999", () => {
    assert.strictEqual(parseTimestamp("0050-06-15T12:00:00Z"), new Date(0).setUTCFullYear(50, 5, 15) + 12 * 3_600_000)
    assert.strictEqual(new Date(parseTimestamp("0099-12-31")!).getUTCFullYear(), 99)
  })
})

describe("toWire", () => {
  const entry = {
    id: 12n,
    at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)),
    userId: "100000000000000001",
    userName: "Ada",
    userAvatar: "abc",
    module: "forms",
    itemIdentifier: 42n,
    eventType: "PUSH" as const,
    eventString: "Created form x"
  }
  it("names every field as the wire does", () => {
    assert.deepStrictEqual(toWire(entry), {
      id: "12",
      timestamp: "2024-01-02T03:04:05.006Z",
      user_id: "100000000000000001",
      user_name: "Ada",
      user_avatar: "abc",
      module_name: "forms",
      item_identifier: 42,
      event_type: "PUSH",
      event_string: "Created form x"
    })
  })
  it("an entry without item or avatar", () => {
    const wire = toWire({ ...entry, id: 7, itemIdentifier: null, userAvatar: null })
    assert.strictEqual(wire.id, "7")
    assert.isNull(wire.item_identifier)
    assert.isNull(wire.user_avatar)
    assert.strictEqual(toWire({ ...entry, itemIdentifier: 0 }).item_identifier, 0)
  })
})
