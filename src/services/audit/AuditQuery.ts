/**
 * The logs route's query, parsed and checked (pure): every problem becomes one 400 item naming its
 * parameter. Shared by the SQL and in-memory AuditLog layers so both answer the same way.
 */
import { Result } from "effect"
import type { AuditLogEntry, AuditLogQuery, EventType } from "../../domain/audit/AuditLog.ts"
import { BadRequest, type Problem } from "../../domain/infra/Errors.ts"
import type { ModuleName } from "../../domain/platform/Platform.ts"

export const AUDIT_MODULES: ReadonlyArray<ModuleName> = ["forms", "photo", "forum", "rss", "streaming", "microblog", "video"]
export const DEFAULT_PAGE_SIZE = 10
export const MAX_PAGE_SIZE = 100

export interface ParsedAuditQuery {
  readonly module: ModuleName | undefined
  /** Inclusive bounds, epoch milliseconds. */
  readonly start: number | undefined
  readonly end: number | undefined
  readonly pageSize: number
  readonly page: number
}

// Years 1..9999 (what PostgreSQL and ISO 8601 both read); wider values are "unreadable".
const MIN_MS = new Date(0).setUTCFullYear(1, 0, 1)
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
const daysIn = (year: number, month: number) => [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!

/** ISO 8601 (no offset means UTC), or integer Unix seconds (13 digits or more: milliseconds). */
export const parseTimestamp = (raw: string): number | undefined => {
  const s = raw.trim()
  const epoch = /^[+-]?(\d+)$/.exec(s)
  if (epoch !== null) {
    const n = Number(s)
    const ms = epoch[1]!.length >= 13 ? n : n * 1000
    return Number.isSafeInteger(ms) && ms >= MIN_MS && ms <= MAX_MS ? ms : undefined
  }
  const m = ISO.exec(s)
  if (m === null) return undefined
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)]
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  // Second 60 is a leap second (ISO 8601): read as the next second, as PostgreSQL does.
  if (hour > 23 || minute > 59 || second > 60) return undefined
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000)
  let offsetMinutes = 0
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const oh = Number(digits.slice(0, 2))
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0
    if (oh > 23 || om > 59 || (digits.length !== 2 && digits.length !== 4)) return undefined
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om)
  }
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day) // Date.UTC maps years 0..99 to 1900..1999
  date.setUTCHours(hour, minute, second, millis)
  const ms = date.getTime() - offsetMinutes * 60_000
  return ms >= MIN_MS && ms <= MAX_MS ? ms : undefined
}

const parseInteger = (raw: string): number | undefined =>
  /^[+-]?\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined

const problem = (path: string, message: string): Problem => ({ message, additionalProperties: { path } })

export const parseAuditQuery = (query: AuditLogQuery): Result.Result<ParsedAuditQuery, BadRequest> => {
  const problems: Array<Problem> = []
  let module: ModuleName | undefined
  if (query.module !== undefined) {
    module = AUDIT_MODULES.find((m) => m === query.module)
    if (module === undefined) problems.push(problem("module", `module must be one of ${AUDIT_MODULES.join(", ")}`))
  }
  const time = (name: "start" | "end") => {
    const raw = query[name]
    if (raw === undefined) return undefined
    const ms = parseTimestamp(raw)
    if (ms === undefined) {
      problems.push(problem(name, `${name} must be an ISO 8601 date-time or integer Unix seconds (13 digits or more: milliseconds), years 1 to 9999`))
    }
    return ms
  }
  const start = time("start")
  const end = time("end")
  if (start !== undefined && end !== undefined && start > end) problems.push(problem("start", "start must not be after end"))
  let pageSize = DEFAULT_PAGE_SIZE
  if (query.page_size !== undefined) {
    const n = parseInteger(query.page_size)
    if (n === undefined || n < 1 || n > MAX_PAGE_SIZE) {
      problems.push(problem("page_size", `page_size must be an integer from 1 to ${MAX_PAGE_SIZE}`))
    } else pageSize = n
  }
  let page = 1
  if (query.page !== undefined) {
    const n = parseInteger(query.page)
    if (n === undefined || n < 1 || !Number.isSafeInteger(n)) {
      problems.push(problem("page", `page must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`))
    } else page = n
  }
  return problems.length > 0
    ? Result.fail(BadRequest.many(problems))
    : Result.succeed({ module, start, end, pageSize, page })
}

/** `max(1, ceil(total / page_size))`. */
export const pageMax = (total: number, pageSize: number): number => Math.max(1, Math.ceil(total / pageSize))

/** A stored entry as the wire shows it. */
export interface StoredEntry {
  readonly id: bigint | number | string
  readonly at: Date
  readonly userId: string
  readonly userName: string
  readonly userAvatar: string | null
  readonly module: string
  readonly itemIdentifier: bigint | number | null
  readonly eventType: EventType
  readonly eventString: string
}

export const toWire = (e: StoredEntry): AuditLogEntry => ({
  id: String(e.id),
  timestamp: e.at.toISOString(),
  user_id: e.userId,
  user_name: e.userName,
  user_avatar: e.userAvatar,
  module_name: e.module,
  item_identifier: e.itemIdentifier === null ? null : Number(e.itemIdentifier),
  event_type: e.eventType,
  event_string: e.eventString
})
