/**
 * Edges of sign-in and of the token header parser: U+0000 in the sign-in `state` or
 * `code_challenge` (400 naming it, never stored), a callback with neither `code` nor `error`, the
 * PKCE verifier's syntax (RFC 7636 §4.1), the user's `global_name` and `locale` kept, a garbage
 * `Authorization` beside a valid `X-Access-Token`, and the 512-character token limit.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { s256 } from "../../src/services/auth/Pkce.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { testDb } from "../utils/Db.ts"
import { CLIENT_REDIRECT, json, raw, signIn, TestApp, UA } from "../utils/TestApp.ts"
import { alice, authLayer, makeFakePlatform } from "./AuthFixtures.ts"
import type { FakePlatform } from "./AuthFixtures.ts"

const CLIENT = "https://client.example/callback"
const loginPath = (extra: string) => `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}${extra}`

const problemsOf = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => {
    if (Exit.isSuccess(exit)) return "success"
    const fail = exit.cause.reasons.find((r) => r._tag === "Fail")
    if (fail?._tag !== "Fail") return "defect"
    const error = fail.error as unknown as { _tag: string; problems?: ReadonlyArray<{ additionalProperties?: { path?: string } }> }
    return `${error._tag}:${(error.problems ?? []).map((p) => p.additionalProperties?.path ?? "").join(",")}`
  })

/** The 302 of the callback for a login started with `query`, the platform approving (or not calling back with a code). */
const signInRedirect = (fake: FakePlatform, options: { readonly codeChallenge?: string } = {}) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const login = yield* auth.login({
      redirectUri: CLIENT,
      state: undefined,
      codeChallenge: options.codeChallenge,
      codeChallengeMethod: options.codeChallenge === undefined ? undefined : "S256"
    })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    return new URL(location).searchParams.get("code")!
  })

describe("sign-in on a real database", () => {
  const fake = makeFakePlatform()
  layer(authLayer(TokenStoreSql.pipe(Layer.provideMerge(testDb("pglite"))), fake).pipe(Layer.provideMerge(CapturedLogs.layer)), {
    excludeTestServices: true
  })("sign-in (pglite)", (it) => {
    it.effect("U+0000 in the sign-in state or code_challenge → 400 naming the parameter (every problem at once), before anything is stored", () =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const sql = yield* SqlClient.SqlClient
        const before = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_in_states`)[0]!.n
        const login = (state: string | undefined, codeChallenge: string | undefined, redirectUri = CLIENT) =>
          problemsOf(auth.login({ redirectUri, state, codeChallenge, codeChallengeMethod: codeChallenge === undefined ? undefined : "S256" }))
        assert.strictEqual(yield* login("a\u0000b", undefined), "BadRequest:state")
        assert.strictEqual(yield* login(undefined, "A".repeat(21) + "\u0000" + "A".repeat(21)), "BadRequest:code_challenge")
        assert.strictEqual(yield* login("x".repeat(513), undefined), "BadRequest:state")
        assert.strictEqual(yield* login(undefined, "too-short"), "BadRequest:code_challenge")
        assert.strictEqual(yield* login("\u0000", "\u0000", "https://evil.example/cb"), "BadRequest:redirect_uri,state,code_challenge")
        // Checking a login that would start (before the redirect to PUBLIC_URL) stores nothing either.
        yield* auth.checkLogin({ redirectUri: CLIENT, state: "x".repeat(512), codeChallenge: s256("v".repeat(43)), codeChallengeMethod: "S256" })
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_in_states`)[0]!.n, before, "nothing stored")
        // What is allowed still works, the longest state included.
        assert.strictEqual(yield* login("x".repeat(512), s256("v".repeat(43))), "success")
      }))

    it.effect("the user's global_name and locale are kept as the platform sends them (updated at each sign-in); absent ones become null and en-US", () =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const sql = yield* SqlClient.SqlClient
        const row = (id: string) => Effect.map(sql<{ username: string; global_name: string | null; locale: string }>`
          SELECT username, global_name, locale FROM users WHERE id = ${id}`, (rows) => rows[0])
        fake.setUser({ ...alice, id: "100000000000000077", username: "zoe", global_name: "Zoë 🌸", locale: "de" })
        yield* auth.exchange({ authorization: yield* signInRedirect(fake), codeVerifier: undefined })
        assert.deepStrictEqual(yield* row("100000000000000077"), { username: "zoe", global_name: "Zoë 🌸", locale: "de" })
        fake.setUser({ ...alice, id: "100000000000000077", username: "zoe", global_name: "Zoe", locale: "pt-BR" })
        yield* signInRedirect(fake)
        assert.deepStrictEqual(yield* row("100000000000000077"), { username: "zoe", global_name: "Zoe", locale: "pt-BR" })
        const { global_name: _g, locale: _l, ...bare } = { ...alice, id: "100000000000000078", username: "yan" }
        fake.setUser(bare)
        yield* signInRedirect(fake)
        assert.deepStrictEqual(yield* row("100000000000000078"), { username: "yan", global_name: null, locale: "en-US" })
      }))
  })
})

describe("PKCE code_verifier syntax (RFC 7636 §4.1: 43 to 128 of [A-Za-z0-9-._~])", () => {
  const verifiers: ReadonlyArray<[string, string, "success" | "Unauthorized"]> = [
    ["42 characters", "a".repeat(42), "Unauthorized"],
    ["43 characters", "a".repeat(43), "success"],
    ["128 characters, every unreserved kind", ("Az09-._~").repeat(16), "success"],
    ["129 characters", "a".repeat(129), "Unauthorized"],
    ["a reserved character", "a".repeat(42) + "+", "Unauthorized"],
    ["a percent-encoding", "a".repeat(40) + "%2B", "Unauthorized"],
    ["a space", "a".repeat(21) + " " + "a".repeat(21), "Unauthorized"],
    ["non-ASCII", "a".repeat(42) + "é", "Unauthorized"]
  ]
  for (const [name, verifier, expected] of verifiers) {
    it.effect(`${name} → ${expected === "success" ? "tokens" : "401"} (its own S256 as the challenge)`, () => {
      const fake = makeFakePlatform()
      return Effect.gen(function*() {
        const auth = yield* Auth
        const code = yield* signInRedirect(fake, { codeChallenge: s256(verifier) })
        assert.strictEqual(yield* problemsOf(auth.exchange({ authorization: code, codeVerifier: verifier })).pipe(Effect.map((r) => r.split(":")[0])), expected)
      }).pipe(Effect.provide(authLayer(TokenStoreMemory, fake)))
    })
  }
})

const http = TestApp.layer({ capabilities: "memory" }).pipe(Layer.provideMerge(CapturedLogs.layer))
layer(http, { excludeTestServices: true, timeout: 60_000 })("sign-in and token headers over HTTP", (it) => {
  it.effect("U+0000 in state or code_challenge → 400 naming the parameter, never a 500 or 503", () =>
    Effect.gen(function*() {
      for (const [extra, path] of [["&state=a%00b", "state"], [`&code_challenge=${"A".repeat(21)}%00${"A".repeat(21)}&code_challenge_method=S256`, "code_challenge"]] as const) {
        const res = yield* raw({}, loginPath(extra))
        const body = yield* json(res)
        assert.strictEqual(res.status, 400, JSON.stringify(body))
        assert.isNull(res.headers.get("location"))
        assert.include(body.errors.map((e: { additionalProperties?: { path?: string } }) => e.additionalProperties?.path), path)
      }
    }))

  it.effect("a callback with neither code nor error → the client's redirect_uri with error=server_error (and its state)", () =>
    Effect.gen(function*() {
      const login = yield* raw({}, loginPath("&state=xyz"))
      assert.strictEqual(login.status, 307)
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!
      const state = new URL(login.headers.get("location")!).searchParams.get("state")!
      const callback = yield* raw({ headers: { cookie } }, `/auth/idp/callback?state=${encodeURIComponent(state)}`)
      assert.strictEqual(callback.status, 302)
      const target = new URL(callback.headers.get("location")!)
      assert.strictEqual(target.origin + target.pathname, CLIENT_REDIRECT)
      assert.strictEqual(target.searchParams.get("error"), "server_error")
      assert.strictEqual(target.searchParams.get("state"), "xyz")
      assert.isNull(target.searchParams.get("code"))
      // Nothing at all: no state → 400 (not a redirect, not a crash).
      const bare = yield* raw({}, "/auth/idp/callback")
      assert.strictEqual(bare.status, 400)
      assert.strictEqual((yield* json(bare)).errors[0].code, "Bad Request")
    }))

  it.effect("a garbage Authorization beside a valid X-Access-Token: the valid one authenticates", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      const call = (headers: Record<string, string>) =>
        Effect.map(raw({ headers }, "/api/v1/user"), (res) => res.status)
      assert.strictEqual(yield* call({ authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl", "x-access-token": access_token }), 200, "another system's bearer token")
      assert.strictEqual(yield* call({ authorization: "bmg_at_" + "g".repeat(43), "x-access-token": `Bearer ${access_token}` }), 200, "an unknown gateway token")
      assert.strictEqual(yield* call({ authorization: "Basic dXNlcjpwYXNz", "x-access-token": access_token }), 200, "another scheme")
      assert.strictEqual(yield* call({ authorization: "Bearer", "x-access-token": access_token }), 200, "an empty bearer")
      assert.strictEqual(yield* call({ authorization: access_token, "x-access-token": "garbage" }), 200, "the other way round")
      assert.strictEqual(yield* call({ authorization: "garbage", "x-access-token": "bmg_at_" + "h".repeat(43) }), 401, "neither resolves")
      assert.strictEqual(yield* call({ authorization: "Bearer" }), 401)
    }))

  it.effect("the 512-character token limit: 511 and 512 are looked up (unknown → 401), 513 is not a token (401 'required')", () =>
    Effect.gen(function*() {
      const { access_token } = yield* signIn(ALICE_ID)
      const ofLength = (n: number) => "bmg_at_" + "A".repeat(n - 7)
      const message = (headers: Record<string, string>) =>
        Effect.gen(function*() {
          const res = yield* raw({ headers }, "/api/v1/user")
          return `${res.status} ${(yield* json(res)).errors?.[0]?.message ?? ""}`
        })
      const unknown = "401 The access token is missing, wrong or no longer valid."
      const notAToken = "401 An access token is required (Authorization or X-Access-Token header)."
      assert.strictEqual(yield* message({ authorization: ofLength(511) }), unknown)
      assert.strictEqual(yield* message({ authorization: `Bearer ${ofLength(512)}` }), unknown)
      assert.strictEqual(yield* message({ authorization: ofLength(513) }), notAToken)
      assert.strictEqual(yield* message({ "x-access-token": `Bearer ${ofLength(513)}` }), notAToken)
      assert.strictEqual((yield* raw({ headers: { authorization: ofLength(513), "x-access-token": access_token } }, "/api/v1/user")).status, 200)
      assert.strictEqual((yield* raw({ headers: { authorization: ofLength(512), "x-access-token": access_token, "user-agent": UA } }, "/api/v1/user")).status, 200)
      // Refused tokens are the client's mistake, not an error of the gateway; and no token in a line.
      assert.isEmpty(yield* logged("", ["Error", "Fatal"]))
      const logs = JSON.stringify(yield* CapturedLogs.use((c) => c.lines))
      assert.notInclude(logs, access_token)
      assert.notInclude(logs, ofLength(512))
    }))
})
