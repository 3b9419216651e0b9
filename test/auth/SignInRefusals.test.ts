/**
 * Sign-in (AuthSignIn.ts), issue #19: the 400 answers of login and callback as a client reads them
 * (each problem's message, path and `in`), and where the browser is sent back, found unpinned by
 * the mutation run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Auth } from "../../src/services/auth/Auth.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import type { FakePlatform } from "./AuthFixtures.ts"
import { authLayer, makeFakePlatform } from "./AuthFixtures.ts"

const CLIENT = "https://client.example/callback"
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

const run = <A, E>(body: (fake: FakePlatform) => Effect.Effect<A, E, Auth>) => {
  const fake = makeFakePlatform()
  return Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2031-03-04T05:06:07.000Z"))
    return yield* body(fake)
  }).pipe(Effect.provide(authLayer(TokenStoreMemory, fake)))
}

type Login = Parameters<Auth["Service"]["login"]>[0]
const login = (input: Partial<Login>) =>
  Effect.flatMap(Auth, (auth) =>
    auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined, ...input }))

/** The problems of a 400 as [message, path, in]. */
const problems = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(self), (e) => {
    const error = e as unknown as { readonly _tag: string; readonly problems: ReadonlyArray<{ readonly message: string; readonly additionalProperties?: Record<string, unknown> }> }
    assert.strictEqual(error._tag, "BadRequest")
    return error.problems.map((p) => [p.message, p.additionalProperties?.["path"], p.additionalProperties?.["in"]])
  })

describe("login: each refusal as the client reads it", () => {
  it.effect("redirect_uri missing or not allowed", () =>
    run(() =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* problems(login({ redirectUri: undefined })), [["redirect_uri is required.", "redirect_uri", "query"]])
        assert.deepStrictEqual(yield* problems(login({ redirectUri: "https://evil.example/callback" })), [
          ["redirect_uri is not on the allowlist (loopback URIs match on any port).", "redirect_uri", "query"]
        ])
      })))

  it.effect("state: 512 characters pass, 513 and U+0000 do not; characters are code points (an emoji is one)", () =>
    run(() =>
      Effect.gen(function*() {
        const ok = yield* login({ state: "s".repeat(512) })
        assert.isString(ok.location)
        assert.deepStrictEqual(yield* problems(login({ state: "s".repeat(513) })), [["state must be at most 512 characters.", "state", "query"]])
        assert.isString((yield* login({ state: "\u{1F600}".repeat(512) })).location)
        assert.deepStrictEqual(yield* problems(login({ state: "\u{1F600}".repeat(513) })), [["state must be at most 512 characters.", "state", "query"]])
        assert.deepStrictEqual(yield* problems(login({ state: "\u{1F600}".repeat(512) + "s" })), [["state must be at most 512 characters.", "state", "query"]])
        assert.deepStrictEqual(yield* problems(login({ state: "a\u0000b" })), [
          ["state must not contain U+0000 (the null character), which cannot be stored.", "state", "query"]
        ])
        // At exactly 512 characters the length is fine: U+0000 is the problem named.
        assert.deepStrictEqual(yield* problems(login({ state: `a\u0000${"s".repeat(510)}` })), [
          ["state must not contain U+0000 (the null character), which cannot be stored.", "state", "query"]
        ])
      })))

  it.effect("code_challenge: exactly 43 base64url characters, nothing before or after", () =>
    run(() =>
      Effect.gen(function*() {
        const ok = yield* login({ codeChallenge: CHALLENGE, codeChallengeMethod: "S256" })
        assert.isString(ok.location)
        const refused = [["code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 §4.2).", "code_challenge", "query"]]
        for (const challenge of [`${CHALLENGE}A`, `!${CHALLENGE}`, `${CHALLENGE}!`, CHALLENGE.slice(1), `${CHALLENGE.slice(1)}=`]) {
          assert.deepStrictEqual(yield* problems(login({ codeChallenge: challenge, codeChallengeMethod: "S256" })), refused, challenge)
        }
      })))

  it.effect("code_challenge and code_challenge_method go together: the missing one is named", () =>
    run(() =>
      Effect.gen(function*() {
        const together = "code_challenge and code_challenge_method=S256 go together."
        assert.deepStrictEqual(yield* problems(login({ codeChallenge: CHALLENGE })), [[together, "code_challenge_method", "query"]])
        assert.deepStrictEqual(yield* problems(login({ codeChallengeMethod: "S256" })), [[together, "code_challenge", "query"]])
      })))

  it.effect("code_challenge_method: S256 only", () =>
    run(() =>
      Effect.gen(function*() {
        const s256Only = [["code_challenge_method must be S256 (RFC 7636 §4.2), the only method accepted.", "code_challenge_method", "query"]]
        for (const method of ["plain", "s256", "", "S256 "]) {
          assert.deepStrictEqual(yield* problems(login({ codeChallenge: CHALLENGE, codeChallengeMethod: method })), s256Only, method)
        }
        assert.deepStrictEqual(yield* problems(login({ codeChallengeMethod: "plain" })), [
          ...s256Only,
          ["code_challenge and code_challenge_method=S256 go together.", "code_challenge", "query"]
        ])
      })))

  it.effect("checkLogin: the same problems as login; none for a login that would start", () =>
    run(() =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const check = (input: Partial<Login>) =>
          auth.checkLogin({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined, ...input })
        const bad = { redirectUri: "https://evil.example/callback", state: "s".repeat(513), codeChallenge: "short", codeChallengeMethod: "plain" }
        assert.deepStrictEqual(yield* problems(check(bad)), yield* problems(login(bad)))
        assert.isUndefined(yield* check({ state: "xyz", codeChallenge: CHALLENGE, codeChallengeMethod: "S256" }))
      })))

  it.effect("every problem in one answer", () =>
    run(() =>
      Effect.gen(function*() {
        const all = yield* problems(login({ redirectUri: undefined, state: "s".repeat(600), codeChallenge: "short", codeChallengeMethod: undefined }))
        assert.deepStrictEqual(all.map((p) => p[1]), ["redirect_uri", "state", "code_challenge", "code_challenge_method"])
        const method = yield* problems(login({ redirectUri: "https://evil.example/callback", state: "s".repeat(600), codeChallenge: "short", codeChallengeMethod: "plain" }))
        assert.deepStrictEqual(method.map((p) => p[1]), ["redirect_uri", "state", "code_challenge", "code_challenge_method"])
      })))
})

describe("callback: the sign-in state and the platform's answer", () => {
  const callback = (input: { readonly state: string | undefined; readonly code?: string | undefined; readonly error?: string | undefined; readonly cookie?: string | undefined }) =>
    Effect.flatMap(Auth, (auth) => auth.callback({ code: input.code, state: input.state, error: input.error, cookie: input.cookie }))
  const missing = [["The sign-in state is missing.", "state", "query"]]
  const refusal = (why: string) => [[`The sign-in state ${why}; start the sign-in again.`, "state", "query"]]

  it.effect("a state missing, empty or over 512 characters is 'missing'; one of 512 is looked up", () =>
    run(() =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* problems(callback({ state: undefined })), missing)
        assert.deepStrictEqual(yield* problems(callback({ state: "" })), missing)
        assert.deepStrictEqual(yield* problems(callback({ state: "s".repeat(513) })), missing)
        assert.deepStrictEqual(yield* problems(callback({ state: "s".repeat(512) })), refusal("is unknown"))
        // Characters are code points: 512 emoji are looked up, 513 are not.
        assert.deepStrictEqual(yield* problems(callback({ state: "\u{1F600}".repeat(512) })), refusal("is unknown"))
        assert.deepStrictEqual(yield* problems(callback({ state: "\u{1F600}".repeat(513) })), missing)
      })))

  it.effect("unknown, used, expired, another browser: each said", () =>
    run((fake) =>
      Effect.gen(function*() {
        const first = yield* login({})
        const back = fake.approve(first.location)
        assert.deepStrictEqual(yield* problems(callback({ state: back.state, code: back.code, cookie: "not-the-cookie" })), refusal("does not belong to this browser (sign-in cookie missing or different)"))
        const done = yield* callback({ state: back.state, code: back.code, cookie: first.cookie.value })
        assert.isNotNull(new URL(done.location).searchParams.get("code"))
        assert.deepStrictEqual(yield* problems(callback({ state: back.state, code: back.code, cookie: first.cookie.value })), refusal("was already used"))
        const second = yield* login({})
        const late = fake.approve(second.location)
        yield* TestClock.adjust("601 seconds")
        assert.deepStrictEqual(yield* problems(callback({ state: late.state, code: late.code, cookie: second.cookie.value })), refusal("has expired"))
      })))

  it.effect("neither code nor error (or an empty code): back to the client with error=server_error, nothing sent to the platform", () =>
    run((fake) =>
      Effect.gen(function*() {
        for (const code of [undefined, ""]) {
          const started = yield* login({ state: "client-state" })
          const back = fake.approve(started.location)
          const { location } = yield* callback({ state: back.state, code, cookie: started.cookie.value })
          const url = new URL(location)
          assert.strictEqual(`${url.origin}${url.pathname}`, CLIENT)
          assert.strictEqual(url.searchParams.get("error"), "server_error")
          assert.strictEqual(url.searchParams.get("state"), "client-state")
          assert.isNull(url.searchParams.get("code"))
        }
        assert.strictEqual(fake.calls.exchangeCode, 0)
      })))
})
