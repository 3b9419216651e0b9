/**
 * The SSRF guard for user-given feed URLs, as the lookup client applies it (layers/sources/Rss.ts,
 * whose address list this reuses): http and https only, and every address the host resolves to
 * must be public; checked before every hop, redirects included. The connection resolves the host
 * again, so guarded requests go through PublicOnlyClient.ts, which checks the address connected to
 * (DNS rebinding).
 */
import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import type { PollFailed } from "../../../services/sources/SourcePoller.ts"
import { isPrivateAddress } from "../Rss.ts"
import { failed } from "./Fetch.ts"

export const publicAddressesOnly = (
  name: string,
  resolve?: (host: string) => Promise<ReadonlyArray<{ readonly address: string }>>
) =>
(url: URL): Effect.Effect<void, PollFailed> => {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(failed("unreachable", `${name} leads to ${url.href}, which is not an http or https URL.`))
  }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  const refused = failed("unreachable", `${name} leads to ${url.host}, a private or loopback address the gateway does not read.`)
  if (isIP(host) !== 0) return isPrivateAddress(host) ? Effect.fail(refused) : Effect.void
  return Effect.tryPromise({
    try: () => resolve !== undefined ? resolve(host) : lookup(host, { all: true, verbatim: true }),
    catch: (e) => {
      const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
      return code === "ENOTFOUND" || code === "ENODATA"
        ? failed("unreachable", `${name}: the host "${host}" does not exist (any more).`)
        : failed("unreachable", `${name}: the host "${host}" could not be resolved.`)
    }
  }).pipe(
    Effect.flatMap((addresses) => addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address)) ? Effect.fail(refused) : Effect.void)
  )
}
