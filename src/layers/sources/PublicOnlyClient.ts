/**
 * The HTTP client for user-given URLs (RSS lookups and the feed poller; issue #12 item 19): the
 * address checked is the address connected to. Checking a host's DNS answer before the request is
 * not enough (the connection resolves it again: DNS rebinding), so the sockets of this client
 * resolve through `publicOnlyLookup`, which refuses the connection when any address of the answer
 * is private (Rss.ts `isPrivateAddress`). node:http agents (NodeHttpClient) take a `lookup`; the
 * fetch client's undici agent is not reachable on Node 20 without a dependency. Literal-IP hosts
 * skip the lookup in Node: the guards before each hop check those (Rss.ts, poll/Guard.ts).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect } from "effect"
import type { Scope } from "effect"
import type { HttpClient } from "effect/http"
import * as Dns from "node:dns"
import type { LookupFunction } from "node:net"
import { isPrivateAddress, PRIVATE_ADDRESS } from "./Rss.ts"

/** How a host name is resolved: `dns.lookup` with `all: true` (injectable for tests). */
export type Resolver = (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

export const systemResolver: Resolver = (host) => Dns.promises.lookup(host, { all: true, verbatim: true })

export { PRIVATE_ADDRESS, refusedPrivate } from "./Rss.ts"

/** A `net.connect` lookup that resolves with `resolve` and refuses any answer with a private address. */
export const publicOnlyLookup = (resolve: Resolver = systemResolver): LookupFunction => (hostname, options, callback) => {
  resolve(hostname).then(
    (answers) => {
      const wanted = options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers
      if (wanted.length === 0) {
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0)
      }
      if (wanted.some((a) => isPrivateAddress(a.address))) {
        const error = Object.assign(new Error(`${hostname} resolves to a private or loopback address; not connecting`), {
          code: PRIVATE_ADDRESS
        })
        return callback(error, "", 0)
      }
      // Node asks for every address (`all`) when it tries them in turn (autoSelectFamily).
      if (options.all === true) {
        return (callback as unknown as (e: null, a: ReadonlyArray<{ address: string; family: number }>) => void)(null, wanted)
      }
      return callback(null, wanted[0]!.address, wanted[0]!.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "", 0)
  )
}

/**
 * A node:http client whose connections go only to public addresses, its agents closed with the
 * scope. `allowPrivateAddresses` (sandbox and tests) gives a plain node:http client.
 */
export const makePublicOnlyClient = (
  options: { readonly allowPrivateAddresses?: boolean | undefined; readonly resolve?: Resolver | undefined } = {}
): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.flatMap(
    NodeHttpClient.makeAgent(options.allowPrivateAddresses === true ? { keepAlive: true } : {
      keepAlive: true,
      lookup: publicOnlyLookup(options.resolve)
    }),
    (agent) => NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agent))
  )
