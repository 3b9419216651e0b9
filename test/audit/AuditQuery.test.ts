/** The pure query parsing shared by every AuditLog layer. */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { AUDIT_COUNT_MODULES } from "../../src/layers/audit/AuditBuckets.ts"
import { AUDIT_MODULES, pageMax, parseAuditQuery, parseTimestamp } from "../../src/services/audit/AuditQuery.ts"

describe("parseTimestamp", () => {
  it("reads ISO 8601 (no offset means UTC) and integer Unix seconds or milliseconds", () => {
    const cases: ReadonlyArray<[string, number | undefined]> = [
      ["2024-01-01", Date.UTC(2024, 0, 1)],
      ["2024-01-01T10:20", Date.UTC(2024, 0, 1, 10, 20)],
      ["2024-01-01T10:20:30", Date.UTC(2024, 0, 1, 10, 20, 30)],
      ["2024-01-01t10:20:30.5z", Date.UTC(2024, 0, 1, 10, 20, 30, 500)],
      ["2024-01-01 10:20:30.123456Z", Date.UTC(2024, 0, 1, 10, 20, 30, 123)],
      ["2024-01-01T10:20:30+05:30", Date.UTC(2024, 0, 1, 4, 50, 30)],
      ["2024-01-01T10:20:30-0100", Date.UTC(2024, 0, 1, 11, 20, 30)],
      ["2024-01-01T10:20:30+02", Date.UTC(2024, 0, 1, 8, 20, 30)],
      ["2024-02-29", Date.UTC(2024, 1, 29)],
      ["0001-01-01", new Date(0).setUTCFullYear(1, 0, 1)],
      ["1704067200", Date.UTC(2024, 0, 1)],
      ["253402300799", Date.UTC(9999, 11, 31, 23, 59, 59)], // 12 digits: seconds
      ["999999999999", undefined], // seconds: year 33658, beyond 9999
      ["1704067200000", Date.UTC(2024, 0, 1)],
      ["0", 0],
      ["-86400", -86_400_000],
      ["2023-02-29", undefined],
      ["2024-04-31", undefined],
      ["2024-00-10", undefined],
      ["2024-01-01T25:00", undefined],
      ["2024-01-01T10:60", undefined],
      ["2024-01-01T10:00+24:00", undefined],
      ["0000-01-01", undefined],
      ["2024-01-01T10:00:00Zjunk", undefined],
      ["1.5", undefined],
      ["1e9", undefined],
      ["", undefined],
      ["now", undefined],
      ["99999999999999999999", undefined]
    ]
    for (const [raw, expected] of cases) assert.strictEqual(parseTimestamp(raw), expected, raw)
  })
})

describe("parseTimestamp: calendar edges", () => {
  const MIN = new Date(0).setUTCFullYear(1, 0, 1)
  const MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
  it.each<[string, string, number | undefined]>([
    ["December 31", "2024-12-31", Date.UTC(2024, 11, 31)],
    ["December 31, last millisecond", "2024-12-31T23:59:59.999Z", Date.UTC(2024, 11, 31, 23, 59, 59, 999)],
    ["December 1", "2024-12-01T00:00", Date.UTC(2024, 11, 1)],
    ["December 32", "2024-12-32", undefined],
    ["month 13", "2024-13-01", undefined],
    ["an offset crossing into the next year", "2023-12-31T23:30:00-01:00", Date.UTC(2024, 0, 1, 0, 30)],
    ["1900-02-29 (not a leap year: divisible by 100)", "1900-02-29", undefined],
    ["1900-02-28", "1900-02-28", Date.UTC(1900, 1, 28)],
    ["2000-02-29 (a leap year: divisible by 400)", "2000-02-29", Date.UTC(2000, 1, 29)],
    ["2100-02-29 (not a leap year)", "2100-02-29", undefined],
    ["2004-02-29", "2004-02-29", Date.UTC(2004, 1, 29)],
    ["2023-02-29", "2023-02-29", undefined],
    ["day 00", "2024-01-00", undefined],
    ["day 00 of December", "2024-12-00T10:00:00Z", undefined],
    ["second 60 (a leap second: the next second, as PostgreSQL reads it)", "2016-12-31T23:59:60Z", Date.UTC(2017, 0, 1)],
    ["second 60 inside a day", "2024-01-01T10:00:60", Date.UTC(2024, 0, 1, 10, 1)],
    ["second 61", "2024-01-01T10:00:61", undefined],
    ["offset +24:00", "2024-01-01T10:00:00+24:00", undefined],
    ["offset -24:00", "2024-01-01T10:00:00-24:00", undefined],
    ["offset +2400", "2024-01-01T10:00:00+2400", undefined],
    ["offset +00:60", "2024-01-01T10:00:00+00:60", undefined],
    ["offset -0060", "2024-01-01T10:00:00-0060", undefined],
    ["offset +23:59", "2024-01-01T10:00:00+23:59", Date.UTC(2023, 11, 31, 10, 1)],
    ["offset of three digits", "2024-01-01T10:00:00+123", undefined],
    ["junk before the date", "x2024-01-01", undefined],
    ["a word before the date", "on 2024-01-01T10:00:00Z", undefined],
    ["a time designator first", "T2024-01-01", undefined],
    ["an expanded (signed) year", "+2024-01-01", undefined],
    ["surrounding spaces", " 2024-01-01 ", Date.UTC(2024, 0, 1)],
    // Unix time: years 1 to 9999, in seconds and in milliseconds (13 digits or more).
    ["seconds: 0001-01-01T00:00:00Z", "-62135596800", MIN],
    ["seconds: one before year 1", "-62135596801", undefined],
    ["seconds: 9999-12-31T23:59:59Z", "253402300799", Date.UTC(9999, 11, 31, 23, 59, 59)],
    ["seconds: year 10000", "253402300800", undefined],
    ["milliseconds: year 1", "-62135596800000", MIN],
    ["milliseconds: one before year 1", "-62135596800001", undefined],
    ["milliseconds: the last of 9999", "253402300799999", MAX],
    ["milliseconds: year 10000", "253402300800000", undefined],
    ["12 digits are seconds (year 5138)", "100000000000", 100_000_000_000_000],
    ["13 digits are milliseconds", "1000000000000", 1_000_000_000_000],
    ["ISO year 1 with an offset that puts it before", "0001-01-01T00:00:00+01:00", undefined],
    ["ISO year 9999 with an offset that puts it after", "9999-12-31T23:59:59-01:00", undefined]
  ])("%s", (_name, raw, expected) => {
    assert.strictEqual(parseTimestamp(raw), expected)
  })
})

describe("parseAuditQuery", () => {
  it.each(["a5", "5a", "5.0", "1e1", "0x10", "", " ", "five"])("page_size=%j → 400 at page_size", (pageSize) => {
    const parsed = parseAuditQuery({ page_size: pageSize })
    assert.isTrue(Result.isFailure(parsed))
    if (Result.isFailure(parsed)) assert.deepStrictEqual(parsed.failure.problems.map((p) => p.additionalProperties?.path), ["page_size"])
  })
  it("page=a5 → 400 at page", () => {
    const parsed = parseAuditQuery({ page: "a5" })
    assert.isTrue(Result.isFailure(parsed))
    if (Result.isFailure(parsed)) assert.deepStrictEqual(parsed.failure.problems.map((p) => p.additionalProperties?.path), ["page"])
  })

  it("applies the defaults", () => {
    assert.deepStrictEqual(parseAuditQuery({}), Result.succeed({ module: undefined, start: undefined, end: undefined, pageSize: 10, page: 1 }))
  })
  it("accepts the bounds and equal start and end", () => {
    const parsed = parseAuditQuery({ page_size: "100", page: "1", module: "video", start: "1704067200", end: "2024-01-01T00:00:00Z" })
    assert.deepStrictEqual(parsed, Result.succeed({ module: "video", start: 1704067200000, end: 1704067200000, pageSize: 100, page: 1 }))
  })
  it("names every bad parameter", () => {
    const parsed = parseAuditQuery({ page_size: "0", page: "0", module: "x", start: "bad", end: "bad" })
    assert.isTrue(Result.isFailure(parsed))
    if (Result.isFailure(parsed)) {
      assert.deepStrictEqual(parsed.failure.problems.map((p) => p.additionalProperties?.path), ["module", "start", "end", "page_size", "page"])
    }
  })
})

describe("modules", () => {
  it("every module a query accepts has its count column", () => {
    assert.deepStrictEqual([...AUDIT_MODULES], [...AUDIT_COUNT_MODULES])
  })
})

describe("pageMax", () => {
  it("is max(1, ceil(total / page_size))", () => {
    assert.deepStrictEqual([pageMax(0, 10), pageMax(1, 10), pageMax(10, 10), pageMax(11, 10), pageMax(1_000_000, 7)], [1, 1, 1, 2, 142858])
  })
})
