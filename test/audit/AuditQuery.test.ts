/** The pure query parsing shared by every AuditLog layer. */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { AUDIT_COUNT_MODULES } from "../../src/layers/sql/AuditBuckets.ts"
import { AUDIT_MODULES, pageMax, parseAuditQuery, parseTimestamp } from "../../src/services/AuditQuery.ts"

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

describe("parseAuditQuery", () => {
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
