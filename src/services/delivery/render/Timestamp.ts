/**
 * The time placeholders (delivery.md §3), by what follows `timestamp` in the name:
 *
 * | placeholder | output |
 * |---|---|
 * | `%timestamp%`, `%timestamp_utc%` | `2024-05-01 12:34:56 (UTC)` |
 * | `%timestamp_iso%` | `2024-05-01T12:34:56Z` (UTC, whole seconds) |
 * | `%timestamp_Europe/London%` (an IANA zone, matched case-insensitively by Intl) | `2024-05-01 13:34:56 (Europe/London)` |
 * | `%timestamp_+0800%`, `%timestamp_-03:30%`, `%timestamp_UTC+2%`, `%timestamp_GMT-5%` | `2024-05-01 20:34:56 (+0800)` |
 *
 * The label in parentheses is the zone as the placeholder spells it. An offset is `+` or `-`, hours
 * 0–14, optional minutes (`:` optional), optionally after `UTC` or `GMT`. Anything else Intl does not
 * know is not a placeholder: it stays as written.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const utcParts = (d: Date) =>
  `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`

const OFFSET = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i

/** Minutes east of UTC for an offset zone, or undefined. */
export const offsetMinutes = (zone: string): number | undefined => {
  const m = OFFSET.exec(zone)
  if (m === null) return undefined
  const hours = Number(m[2])
  const minutes = m[3] === undefined ? 0 : Number(m[3])
  if (hours > 14 || minutes > 59 || hours * 60 + minutes > 14 * 60) return undefined
  return (m[1] === "-" ? -1 : 1) * (hours * 60 + minutes)
}

// Formatters are costly to build: keep the zones seen (a bounded cache; unknown zones are not kept).
const formatters = new Map<string, Intl.DateTimeFormat>()
const formatter = (zone: string): Intl.DateTimeFormat | undefined => {
  const cached = formatters.get(zone)
  if (cached !== undefined) return cached
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(zone)) return undefined
  let f: Intl.DateTimeFormat
  try {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, calendar: "gregory", numberingSystem: "latn", hourCycle: "h23",
      year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit"
    })
  } catch {
    return undefined
  }
  if (formatters.size >= 256) formatters.clear()
  formatters.set(zone, f)
  return f
}

const inZone = (d: Date, f: Intl.DateTimeFormat): string => {
  const parts = new Map(f.formatToParts(d).map((p) => [p.type, p.value]))
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.get(type) ?? "00"
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}:${get("second")}`
}

/**
 * The value of the placeholder `timestamp<suffix>` for the time `d` (suffix `""`, `"_utc"`,
 * `"_Europe/London"`…), or undefined when the suffix names no zone (the placeholder stays).
 */
export const formatTimestamp = (d: Date, suffix: string): string | undefined => {
  if (suffix !== "" && !suffix.startsWith("_")) return undefined
  const zone = suffix.slice(1)
  const lower = zone.toLowerCase()
  const valid = !Number.isNaN(d.getTime())
  if (suffix === "_") return undefined
  if (zone === "" || lower === "utc") return valid ? `${utcParts(d)} (UTC)` : "Unknown"
  if (lower === "iso") return valid ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : "Unknown"
  const offset = offsetMinutes(zone)
  if (offset !== undefined) return valid ? `${utcParts(new Date(d.getTime() + offset * 60_000))} (${zone})` : "Unknown"
  const f = formatter(zone)
  if (f === undefined) return undefined
  return valid ? `${inZone(d, f)} (${zone})` : "Unknown"
}
