/**
 * Feed dates as feed readers read them: RFC 822 (`pubDate`) with the usual liberties (no weekday,
 * two-digit years, `1500` for `15:00`, zone names, `GMT+2`, full or German month names), W3C/ISO 8601
 * (`dc:date`, Atom) with or without a zone (none means UTC), and whatever else `Date.parse` reads.
 */

// English, then the German, French, Spanish, Portuguese and Italian abbreviations feeds use.
const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
  mär: 3, mrz: 3, mai: 5, okt: 10, dez: 12, sept: 9, janv: 1, fév: 2, févr: 2, avr: 4, juin: 6, juil: 7,
  aoû: 8, août: 8, déc: 12, ene: 1, abr: 4, ago: 8, dic: 12, fev: 2, set: 9, out: 10, gen: 1, mag: 5,
  giu: 6, lug: 7, ott: 10
}

const ZONES: Record<string, number> = {
  z: 0, ut: 0, utc: 0, gmt: 0, wet: 0, bst: 60, cet: 60, met: 60, cest: 120, mest: 120, eet: 120, eest: 180, msk: 180,
  est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420, akst: -540, akdt: -480,
  hst: -600, jst: 540, kst: 540, aest: 600, aedt: 660, acst: 570, awst: 480, nzst: 720, nzdt: 780
}

/** Minutes east of UTC for a zone as written (`+0200`, `-05:00`, `GMT+2`, `PDT`, `Z`); 0 when unknown. */
const zoneOffset = (zone: string): number => {
  const z = zone.trim().toLowerCase().replace(/^\(|\)$/g, "")
  if (z === "") return 0
  const numeric = /^(?:gmt|utc|ut)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(z)
  if (numeric !== null) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0)
    return numeric[1] === "-" ? -minutes : minutes
  }
  return ZONES[z.split(/\s+/)[0]!] ?? 0
}

const fromParts = (y: number, mo: number, d: number, h: number, mi: number, s: number, offsetMinutes: number): Date | null => {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 24 || mi > 59 || s > 61) return null
  const ms = Date.UTC(y, mo - 1, d, h, mi, Math.floor(s), Math.round((s % 1) * 1000)) - offsetMinutes * 60_000
  return Number.isFinite(ms) ? new Date(ms) : null
}

const fullYear = (y: string) => (y.length <= 2 ? (Number(y) < 50 ? 2000 : 1900) + Number(y) : Number(y))

const RFC822 =
  /^(?:\p{L}+\.?,?\s*)?(\d{1,2})(?:\.|st|nd|rd|th)?[\s-]+(\p{L}+)\.?,?[\s-]+(\d{2,4}),?(?:[\sT]+(\d{1,2}):?(\d{2})(?::?(\d{2}(?:\.\d+)?))?)?\s*(.*)$/u
const ISO =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:[T\s]+(\d{1,2}):?(\d{2})(?::?(\d{2}(?:[.,]\d+)?))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/** The date, or null when it cannot be read. */
export const parseFeedDate = (input: string | null | undefined): Date | null => {
  const s = input?.trim().replace(/\s+/g, " ")
  if (s === undefined || s === "") return null
  const iso = ISO.exec(s)
  if (iso !== null) {
    return fromParts(
      Number(iso[1]), Number(iso[2]), Number(iso[3]), Number(iso[4] ?? 0), Number(iso[5] ?? 0),
      Number((iso[6] ?? "0").replace(",", ".")), zoneOffset(iso[7] ?? "")
    )
  }
  const rfc = RFC822.exec(s)
  if (rfc !== null) {
    const name = rfc[2]!.toLowerCase()
    const month = MONTHS[name] ?? MONTHS[name.slice(0, 3)]
    if (month !== undefined) {
      return fromParts(
        fullYear(rfc[3]!), month, Number(rfc[1]), Number(rfc[4] ?? 0), Number(rfc[5] ?? 0), Number(rfc[6] ?? 0),
        zoneOffset(rfc[7] ?? "")
      )
    }
  }
  const parsed = Date.parse(s)
  return Number.isFinite(parsed) ? new Date(parsed) : null
}
