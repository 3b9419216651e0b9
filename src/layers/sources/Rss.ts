/**
 * The rss source: fetch a feed URL and read it as RSS (2.0, 0.9x, 1.0/RDF) or Atom (1.0, 0.3).
 * Guards: http and https only; in production every address the host resolves to must be public
 * (no loopback, private, link-local, CGNAT, multicast...), checked again at every redirect, which is
 * followed by hand (at most 5); the body is capped (2 MiB by default); all of it within the time-out.
 * The connection resolves the host again, so in production the client is PublicOnlyClient.ts, whose
 * sockets refuse a private address at connect time (DNS rebinding). An address is private also when
 * an IPv6 form carries a private IPv4 one (mapped, compatible, 6to4, NAT64) or is a tunnel (Teredo).
 */
import { Effect, Stream } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import type { HttpClientResponse } from "effect/http"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"
import { BadRequest, NotFound, RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { RssInfo } from "../../services/sources/ExternalSources.ts"
import { countUpstream } from "../../services/infra/Metrics.ts"
import { RETRY_AFTER_SECONDS, retryAfter } from "./Upstream.ts"
import type { Upstream } from "./Upstream.ts"
import { USER_AGENT_PRODUCT } from "../../domain/infra/Version.ts"
import { readFeedBytes } from "./poll/FeedReader.ts"

export interface RssOptions {
  /** Sandbox and tests only: allow loopback and private addresses (production: false). */
  readonly allowPrivateAddresses?: boolean | undefined
  /** Default 2 MiB. */
  readonly maxBytes?: number | undefined
  readonly userAgent?: string | undefined
  /** How host names are resolved, before each hop and at connect time (tests inject one). Default: the system's. */
  readonly resolve?: ((host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>) | undefined
}

const MAX_REDIRECTS = 5

const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16],
  ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
  ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  // No ::ffff:0:0/96 rule: BlockList already checks IPv4-mapped addresses against the IPv4 rules,
  // and that rule would match every IPv4 address.
  ["::", 128], ["::1", 128], ["64:ff9b::", 96], ["100::", 64], ["2001:db8::", 32],
  ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8]
] as const) blocked.addSubnet(net, prefix, "ipv6")

// Tunnels whose far end cannot be checked here: Teredo (2001::/32), local-use NAT64 (64:ff9b:1::/48),
// the 6to4 relay anycast (192.88.99.0/24).
blocked.addSubnet("2001::", 32, "ipv6")
blocked.addSubnet("64:ff9b:1::", 48, "ipv6")
blocked.addSubnet("192.88.99.0", 24, "ipv4")

/** An IPv6 address as its eight 16-bit groups (an embedded dotted IPv4 tail included), or undefined. */
const hextets = (address: string): Array<number> | undefined => {
  let text = address.toLowerCase().replace(/%.*$/, "")
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted !== null) {
    const b = dotted.slice(1).map(Number)
    if (b.some((x) => x > 255)) return undefined
    text = `${text.slice(0, dotted.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const parse = (part: string) => part === "" ? [] : part.split(":").map((h) => parseInt(h, 16))
  const head = parse(halves[0]!)
  const tail = halves.length === 2 ? parse(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if (halves.length === 1 ? head.length !== 8 : fill < 0) return undefined
  const groups = [...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail]
  return groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff) ? undefined : groups
}

const ipv4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`

/**
 * The IPv4 address an IPv6 one carries, where traffic to it may reach that IPv4 host: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), 6to4
 * (`2002:aabb:ccdd::/48`) and NAT64 (`64:ff9b::a.b.c.d`).
 */
const embeddedIpv4 = (g: ReadonlyArray<number>): string | undefined => {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return ipv4Of(g[6]!, g[7]!)
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6]!, g[7]!)
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!)
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return ipv4Of(g[6]!, g[7]!)
  return undefined
}

/** True for an address a feed must not be fetched from in production (anything not an IP address too). */
export const isPrivateAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, "ipv4")
  if (family !== 6) return true
  const groups = hextets(address)
  if (groups === undefined) return true
  const v4 = embeddedIpv4(groups)
  return (v4 !== undefined && blocked.check(v4, "ipv4")) || blocked.check(address, "ipv6")
}

/** The error code of a connection PublicOnlyClient.ts refused (its address was private at connect time). */
export const PRIVATE_ADDRESS = "EPRIVATEADDRESS"

/** Whether a failure (an HttpClientError, its cause chain) is such a refused connection. */
export const refusedPrivate = (error: unknown): boolean => {
  let e: unknown = error
  for (let depth = 0; depth < 6 && typeof e === "object" && e !== null; depth++) {
    if ((e as { code?: unknown }).code === PRIVATE_ADDRESS) return true
    const next = (e as { cause?: unknown; reason?: unknown }).reason ?? (e as { cause?: unknown }).cause
    e = next === e ? undefined : next
  }
  return false
}

type RssError = BadRequest | NotFound | RequestTimeout | ServiceUnavailable

export const makeRss = (u: Upstream, options: RssOptions) => {
  const maxBytes = options.maxBytes ?? 2 * 1024 * 1024
  const userAgent = options.userAgent ?? `${USER_AGENT_PRODUCT} (feed reader)`
  const fail = (what: string, retryAfterSeconds: number = RETRY_AFTER_SECONDS) =>
    ServiceUnavailable.of(`The rss source ${what}.`, Math.max(1, retryAfterSeconds))

  const guard = (url: URL, shown: string): Effect.Effect<void, BadRequest | NotFound | ServiceUnavailable> => {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Effect.fail(BadRequest.of(`${shown} is not an http or https URL.`))
    }
    if (options.allowPrivateAddresses === true) return Effect.void
    const host = url.hostname.replace(/^\[|\]$/g, "")
    const refused = BadRequest.of(`${shown} points to a private or loopback address.`)
    if (isIP(host) !== 0) return isPrivateAddress(host) ? Effect.fail(refused) : Effect.void
    return Effect.tryPromise({
      try: () => options.resolve !== undefined ? options.resolve(host) : lookup(host, { all: true, verbatim: true }),
      catch: (e): NotFound | ServiceUnavailable => {
        const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
        return code === "ENOTFOUND" || code === "ENODATA"
          ? NotFound.of(`The feed host "${host}" does not exist.`)
          : fail(`could not resolve "${host}"`)
      }
    }).pipe(
      Effect.flatMap((addresses) =>
        addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address)) ? Effect.fail(refused) : Effect.void
      )
    )
  }

  const readCapped = (response: HttpClientResponse.HttpClientResponse, shown: string) => {
    const tooLarge = BadRequest.of(`${shown} is larger than ${Math.floor(maxBytes / 1024)} KiB.`)
    const length = Number(response.headers["content-length"] ?? "0")
    if (length > maxBytes) return Effect.fail(tooLarge)
    return response.stream.pipe(
      Stream.runFoldEffect(
        () => ({ chunks: [] as Array<Uint8Array>, size: 0 }),
        (acc, chunk) => {
          const size = acc.size + chunk.length
          if (size > maxBytes) return Effect.fail(tooLarge)
          acc.chunks.push(chunk)
          return Effect.succeed({ chunks: acc.chunks, size })
        }
      ),
      Effect.map(({ chunks }) => Buffer.concat(chunks)),
      Effect.mapError((e) => e._tag === "BadRequest" ? e : fail(`could not read ${shown}`))
    )
  }

  /** Fetches the feed, following redirects by hand so each hop is guarded. */
  const download = (start: URL, shown: string): Effect.Effect<{ bytes: Buffer; contentType: string; url: string }, RssError> =>
    Effect.gen(function*() {
      let url = start
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        yield* guard(url, shown)
        const response = yield* u.client.execute(HttpClientRequest.get(url.href, {
          headers: {
            accept: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5",
            "user-agent": userAgent
          }
        })).pipe(
          Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
          // User-given URLs: counted without their path (services/infra/Metrics.ts).
          Effect.tap((r) => countUpstream("rss", "GET :feed", r.status)),
          Effect.tapError(() => countUpstream("rss", "GET :feed", undefined)),
          Effect.mapError((e): BadRequest | ServiceUnavailable =>
            refusedPrivate(e) ? BadRequest.of(`${shown} points to a private or loopback address.`) : fail(`could not reach ${url.host}`))
        )
        const status = response.status
        const location = response.headers["location"]
        if (status >= 300 && status < 400 && location !== undefined) {
          url = yield* Effect.try({ try: () => new URL(location, url), catch: () => BadRequest.of(`${shown} redirects to an invalid URL.`) })
          continue
        }
        if (status === 404 || status === 410) return yield* Effect.fail(NotFound.of(`${shown} does not exist (${status}).`))
        if (status >= 500 || status === 429) {
          return yield* Effect.fail(fail(`got ${status} from ${url.host}`, retryAfter(response.headers) ?? RETRY_AFTER_SECONDS))
        }
        if (status < 200 || status >= 300) return yield* Effect.fail(BadRequest.of(`${shown} could not be fetched (${status}).`))
        const bytes = yield* readCapped(response, shown)
        return { bytes, contentType: response.headers["content-type"] ?? "", url: url.href }
      }
      return yield* Effect.fail(BadRequest.of(`${shown} redirects more than ${MAX_REDIRECTS} times.`))
    })

  const rss = (input: string): Effect.Effect<RssInfo, RssError> => {
    const shown = input.trim()
    const parsed = URL.canParse(shown) ? new URL(shown) : undefined
    if (parsed === undefined) return Effect.fail(BadRequest.of(`${shown} is not a URL.`))
    return download(parsed, shown).pipe(
      Effect.timeoutOrElse({
        duration: u.timeout,
        orElse: () => Effect.fail(RequestTimeout.of(`The rss source (${parsed.host}) did not answer in time; retry.`))
      }),
      Effect.flatMap(({ bytes, contentType, url }) => {
        // The poller's reader and rules (delivery.md §10 "One reader"); its refusal in its words.
        const reading = readFeedBytes(bytes, contentType, url, `The feed at ${shown}`)
        if (reading._tag === "Unreadable") return Effect.fail(BadRequest.of(reading.reason))
        const title = reading.feed.title?.replace(/\s+/g, " ").trim() ?? ""
        return Effect.succeed({ url: parsed.href, title: title.length > 0 ? title : parsed.host })
      }),
      Effect.withSpan("ExternalSources.rss")
    )
  }

  return { rss }
}
