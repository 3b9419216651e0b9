/**
 * The user's platform token as a client sees it, over HTTP against the sandbox platform: a 401 from
 * the platform first renews the token once (only if that fails: 401 "sign in again"); an expired
 * one is refreshed before use; a stored one no key opens is 401 "sign in again", never a 500.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { SandboxConfig } from "../../src/sandbox/Sandbox.ts"
import { ALICE_ID, BOB_ID } from "../../src/sandbox/Seed.ts"
import { json, raw, signIn, TestApp } from "../utils/TestApp.ts"

const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return text === "" ? undefined : JSON.parse(text)
    })
  })
const fault = (route: string, kind: "401" | "500", count: number) => sandbox("POST", "/sandbox/faults", { route, kind, count })
const stats = sandbox("GET", "/sandbox/stats") as Effect.Effect<{ calls: Record<string, number>; invalid: number }, never, TestApp>
const calls = Effect.map(stats, (s) => s.calls)
const TOKEN = "POST /oauth2/token"
const ME = "GET /users/@me"

const user = (token: string) =>
  Effect.gen(function*() {
    const res = yield* raw({ token }, "/api/v1/user")
    return { status: res.status, body: yield* json(res) }
  })

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("a platform 401 on the user's token", (it) => {
  it.effect("renews the token once and answers: the client never sees it", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      const before = yield* calls
      yield* fault(ME, "401", 1)
      const answer = yield* user(access_token)
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assert.strictEqual(answer.body.username, "alice")
      const after = yield* calls
      assert.strictEqual((after[TOKEN] ?? 0) - (before[TOKEN] ?? 0), 1, "one refresh at the platform")
      assert.strictEqual((after[ME] ?? 0) - (before[ME] ?? 0), 2, "the call, then once more with the new token")
      // The renewed token is kept: no further refresh.
      assert.strictEqual((yield* user(access_token)).status, 200)
      assert.strictEqual(((yield* calls)[TOKEN] ?? 0) - (before[TOKEN] ?? 0), 1)
    }))

  it.effect("a second 401 with the renewed token → 401 sign in again (one refresh, the sign-in kept)", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      const before = yield* calls
      yield* fault(ME, "401", 2)
      const answer = yield* user(access_token)
      assert.strictEqual(answer.status, 401, JSON.stringify(answer.body))
      assert.match(answer.body.errors[0].message, /sign in again/)
      assert.strictEqual(((yield* calls)[TOKEN] ?? 0) - (before[TOKEN] ?? 0), 1, "exactly one refresh")
      assert.strictEqual((yield* user(access_token)).status, 200, "the platform accepts the token again: so does the gateway")
    }))

  it.effect("a refused refresh → 401 sign in again, and the sign-in is over", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      yield* fault(ME, "401", 1)
      yield* fault(TOKEN, "401", 1)
      const answer = yield* user(access_token)
      assert.strictEqual(answer.status, 401, JSON.stringify(answer.body))
      assert.match(answer.body.errors[0].message, /sign in again/)
      assert.strictEqual((yield* user(access_token)).status, 401, "the gateway's tokens of that sign-in are revoked")
    }))

  it.effect("a platform 401 on the server list renews the token the same way", () =>
    Effect.gen(function*() {
      // Bob's listing first: the bot's own server list (same platform route) is then cached.
      const bob = yield* signIn(BOB_ID)
      const bots = (yield* json(yield* raw({ token: bob.access_token }, "/api/v1/bots"))).bots as Array<{ id: string }>
      assert.strictEqual((yield* raw({ token: bob.access_token }, `/api/v1/bots/${bots[0]!.id}/servers`)).status, 200)
      const { access_token } = yield* signIn(ALICE_ID)
      yield* fault("GET /users/@me/guilds", "401", 1)
      const res = yield* raw({ token: access_token }, `/api/v1/bots/${bots[0]!.id}/servers`)
      assert.strictEqual(res.status, 200, JSON.stringify(yield* json(res)))
    }))
})

const shortLived = TestApp.layer({ capabilities: "memory" }).pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...SandboxConfig.defaultValue(), userTokenTtlSeconds: 62 }))
)
layer(shortLived, { excludeTestServices: true, timeout: 60_000 })("an expired platform token", (it) => {
  it.effect("is refreshed before use (once), not used and refused", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      // The platform token had 62 s; 2.5 s later it is inside the 60 s margin (a fresh one is not).
      yield* Effect.sleep("2500 millis")
      const before = yield* stats
      const answers = yield* Effect.forEach(Array.from({ length: 5 }), () => user(access_token), { concurrency: "unbounded" })
      for (const a of answers) assert.strictEqual(a.status, 200, JSON.stringify(a.body))
      const after = yield* stats
      assert.strictEqual((after.calls[TOKEN] ?? 0) - (before.calls[TOKEN] ?? 0), 1, "refreshed once for the 5 requests")
      assert.strictEqual(after.invalid - before.invalid, 0, "no call was made with the expiring token and refused")
    }))
})

layer(TestApp.layer({ capabilities: { db: "pglite" } }), { excludeTestServices: true, timeout: 60_000 })("a stored platform token no key opens", (it) => {
  const familyOf = (accessToken: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { createHash } = yield* Effect.promise(() => import("node:crypto"))
      const rows = yield* sql<{ family_id: string }>`
        SELECT family_id FROM tokens WHERE token_sha256 = ${createHash("sha256").update(accessToken).digest("hex")}`
      return rows[0]!.family_id
    })

  it.effect("its ciphertext moved to another sign-in → 401 sign in again, not 500", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const victim = yield* signIn(ALICE_ID)
      const other = yield* signIn(ALICE_ID)
      const [victimFamily, otherFamily] = [yield* familyOf(victim.access_token), yield* familyOf(other.access_token)]
      yield* sql`UPDATE token_families SET (platform_access_enc, platform_refresh_enc) =
        (SELECT platform_access_enc, platform_refresh_enc FROM token_families WHERE id = ${otherFamily}) WHERE id = ${victimFamily}`
      const answer = yield* user(victim.access_token)
      assert.strictEqual(answer.status, 401, JSON.stringify(answer.body))
      assert.match(answer.body.errors[0].message, /sign in again/)
      assert.strictEqual((yield* user(other.access_token)).status, 200)
    }))

  it.effect("encrypted under a key no longer configured → 401 sign in again, not 500", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const victim = yield* signIn(ALICE_ID)
      const family = yield* familyOf(victim.access_token)
      // `v1.<key id>.<nonce>.<body>`: the same ciphertext under a key id that is not in the keyring.
      yield* sql`UPDATE token_families SET platform_access_enc = regexp_replace(platform_access_enc, '^v1\\.[^.]+\\.', 'v1.removed.'),
        platform_refresh_enc = regexp_replace(platform_refresh_enc, '^v1\\.[^.]+\\.', 'v1.removed.') WHERE id = ${family}`
      const answer = yield* user(victim.access_token)
      assert.strictEqual(answer.status, 401, JSON.stringify(answer.body))
      assert.match(answer.body.errors[0].message, /sign in again/)
    }))
})
