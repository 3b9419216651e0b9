/**
 * A free port for a test's listener, from this vitest worker's own quarter of the range that
 * `freePort` draws from (20000-31999; VITEST_POOL_ID 1, 2, …). A port probed free stays unbound until
 * its listener starts — a second or two later for a gateway built as a layer or started as a child
 * process — and a file running at the same time in another worker drew the same port in that gap
 * (EADDRINUSE: test/api/RateLimitOutage.test.ts on Node 24, 2026-12-02). The ports tests draw here
 * no longer collide across workers. A gateway's embedded database binds port 0 (Embedded.ts): the
 * kernel picks its port as it binds.
 */
import { createServer } from "node:net"

/** Listens on `port` (0: any) on the loopback address, closes, and answers the port it had. */
const probePort = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      const bound = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(bound))
    })
  })

/**
 * A port that was free a moment ago, for a listener started right after. Chosen below Linux's
 * ephemeral range (32768-60999 by default), because a port the kernel handed out for "any port" can
 * be given to an outgoing connection (to PostgreSQL, Redis, an upstream) before the listener binds it:
 * seen as EADDRINUSE in the test suite. After 20 taken ports, the kernel's choice.
 */
const anyFreePort = (): Promise<number> => freePortIn(20_000, 12_000)

/** A free port from `size` ports from `from`. */
export const freePortIn = async (from: number, size: number): Promise<number> => {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = from + Math.floor(Math.random() * size)
    try {
      return await probePort(port)
    } catch {
      // taken: another one
    }
  }
  return probePort(0)
}

const SLICES = 4
const SLICE = 12_000 / SLICES

export const freePort = (): Promise<number> => {
  const pool = Number(process.env.VITEST_POOL_ID)
  return Number.isInteger(pool) && pool > 0 ? freePortIn(20_000 + ((pool - 1) % SLICES) * SLICE, SLICE) : anyFreePort()
}
