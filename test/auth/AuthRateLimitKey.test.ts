/**
 * The `/auth` counter's key over HTTP (decisions.md "Rate limits"): a request presenting a valid
 * gateway token (check, refresh, revoke) counts against its family; anything else against the
 * client address. Junk from one address cannot lock the signed-in users behind it out of refresh.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID } from "../../src/sandbox/Seed.ts"
import { json, raw, signIn, TestApp } from "../utils/TestApp.ts"

const LIMIT = 8

const post = (path: string, headers: Record<string, string> = {}) => raw({ method: "POST", headers }, `/auth/idp/token/${path}`)

layer(TestApp.layer({ capabilities: "memory", config: { rateLimitAuthPerHour: LIMIT } }), { excludeTestServices: true, timeout: 60_000 })(
  "the /auth counter's key",
  (it) => {
    it.effect("60 junk requests from one address do not lock its signed-in users out of refresh, check and revoke", () =>
      Effect.gen(function*() {
        // Two sign-ins: 3 requests each (login, callback, token) from this address.
        const alice = yield* signIn(ALICE_ID)
        const bob = yield* signIn(BOB_ID)
        const junk: Array<number> = []
        for (let i = 0; i < 60; i++) {
          const res = yield* post(i % 2 === 0 ? "refresh" : "check", { "x-refresh-token": `bmg_rt_junk${i}`, authorization: `bmg_at_junk${i}` })
          junk.push(res.status)
        }
        assert.strictEqual(junk.filter((s) => s === 429).length, 60 - (LIMIT - 6), JSON.stringify(junk))
        const login = yield* raw({}, "/auth/idp/login?redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback")
        assert.strictEqual(login.status, 429, "the address itself stays limited")

        const refreshed = yield* post("refresh", { "x-refresh-token": alice.refresh_token })
        assert.strictEqual(refreshed.status, 200, JSON.stringify(yield* json(refreshed.clone())))
        assert.match(refreshed.headers.get("ratelimit")!, new RegExp(`^"auth";r=${LIMIT - 1};t=\\d+$`), "counted on the family")
        const next = (yield* json(refreshed)) as { access_token: string; refresh_token: string }
        const checked = yield* post("check", { authorization: next.access_token })
        assert.strictEqual(checked.status, 200)
        assert.match(checked.headers.get("ratelimit")!, new RegExp(`^"auth";r=${LIMIT - 2};t=\\d+$`), "the new pair is the same family")
        const bobChecked = yield* post("check", { authorization: `Bearer ${bob.access_token}` })
        assert.strictEqual(bobChecked.status, 200)
        assert.match(bobChecked.headers.get("ratelimit")!, new RegExp(`^"auth";r=${LIMIT - 1};t=\\d+$`), "each family its own count")
        const revoked = yield* post("revoke", { authorization: bob.access_token })
        assert.deepStrictEqual([revoked.status, yield* json(revoked)], [200, { success: true }])
      }))
  }
)

layer(TestApp.layer({ capabilities: "memory", config: { rateLimitAuthPerHour: LIMIT } }), { excludeTestServices: true, timeout: 60_000 })(
  "the /auth counter per family",
  (it) => {
    it.effect("a family's own requests are limited; an unknown token counts on the address", () =>
      Effect.gen(function*() {
        const alice = yield* signIn(ALICE_ID) // 3 on the address
        const statuses: Array<number> = []
        for (let i = 0; i < LIMIT + 1; i++) statuses.push((yield* post("check", { authorization: alice.access_token })).status)
        assert.deepStrictEqual(statuses, [...Array.from({ length: LIMIT }, () => 200), 429])
        const unknown = yield* post("check", { authorization: "bmg_at_" + "u".repeat(43) })
        assert.strictEqual(unknown.status, 401, "an unknown token is counted on the address, which has room")
        assert.match(unknown.headers.get("ratelimit")!, new RegExp(`^"auth";r=${LIMIT - 4};t=\\d+$`))
      }))
  }
)
