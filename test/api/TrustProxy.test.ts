/**
 * The `/auth` counter's client address (decisions.md "Rate limits": `X-Forwarded-For` is read only
 * when configured as behind a trusted proxy). With TRUST_PROXY the last entry counts (the one our
 * proxy appended; the earlier ones are the client's to forge); without it the header is ignored and
 * the socket's peer counts, so a client cannot spread its attempts over made-up addresses.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { raw, TestApp } from "../utils/TestApp.ts"

const LIMIT = 3

/** A failed code exchange (401, counted by address: no token of a family is presented) from `forwarded`. */
const attempt = (forwarded: string | undefined) =>
  Effect.map(
    raw({
      method: "POST",
      headers: { authorization: `bmg_tt_${"x".repeat(43)}`, ...(forwarded === undefined ? {} : { "x-forwarded-for": forwarded }) }
    }, "/auth/idp/token"),
    (res) => res.status
  )

const config = { rateLimitAuthPerHour: LIMIT }

layer(TestApp.layer({ capabilities: "memory", config: { ...config, trustProxy: true } }), { excludeTestServices: true, timeout: 30_000 })(
  "behind a trusted proxy (TRUST_PROXY=true)",
  (it) => {
    it.effect("each forwarded address has its own count; only the last entry of the header decides", () =>
      Effect.gen(function*() {
        const first: Array<number> = []
        for (let i = 0; i < LIMIT + 1; i++) first.push(yield* attempt("198.51.100.7"))
        assert.deepStrictEqual(first, [401, 401, 401, 429])
        // Another client behind the same proxy is not refused for the first one's attempts.
        assert.strictEqual(yield* attempt("198.51.100.8"), 401)
        // A forged first entry does not make a new client: the proxy's entry (the last) counts.
        assert.strictEqual(yield* attempt("203.0.113.99, 198.51.100.7"), 429)
        assert.strictEqual(yield* attempt("198.51.100.7, 203.0.113.99"), 401)
      }))
  }
)

layer(TestApp.layer({ capabilities: "memory", config: { ...config, trustProxy: false } }), { excludeTestServices: true, timeout: 30_000 })(
  "not behind a trusted proxy (the default)",
  (it) => {
    it.effect("X-Forwarded-For is ignored: every attempt from this socket's address shares one count", () =>
      Effect.gen(function*() {
        const statuses: Array<number> = []
        for (let i = 0; i < LIMIT + 2; i++) statuses.push(yield* attempt(`198.51.100.${i + 1}`))
        assert.deepStrictEqual(statuses, [401, 401, 401, 429, 429])
        assert.strictEqual(yield* attempt(undefined), 429)
      }))
  }
)
