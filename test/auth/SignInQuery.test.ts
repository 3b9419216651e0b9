/**
 * The sign-in's query over HTTP (decisions.md "Errors", "Sign-in and tokens"): every problem of a
 * login in one 400, each at its path in the query, `redirect_uri` beside the others; `state` counted
 * in code points (512 emoji pass and come back unchanged, 513 do not); a refused callback state
 * named at its path; and the OpenAPI document stating the rules the gateway checks. On each
 * database: the client's state is stored and read back there.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { dbKinds } from "../utils/Db.ts"
import { CLIENT_REDIRECT, json, raw, TestApp } from "../utils/TestApp.ts"

const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
const EMOJI = "\u{1F600}"
const q = (params: Record<string, string>) => new URLSearchParams(params).toString()

interface Problem {
  readonly code: string
  readonly message: string
  readonly additionalProperties?: { readonly path?: string; readonly in?: string }
}

/** A 400's problems as `path in: message`, after checking it is a 400 that redirects nowhere and sets no cookie. */
const refused = (path: string) =>
  Effect.gen(function*() {
    const res = yield* raw({}, path)
    const body = (yield* json(res)) as { errors: ReadonlyArray<Problem> }
    assert.strictEqual(res.status, 400, JSON.stringify(body))
    assert.isNull(res.headers.get("location"))
    assert.isNull(res.headers.get("set-cookie"))
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    for (const e of body.errors) assert.strictEqual(e.code, "Bad Request")
    return body.errors.map((e) => `${e.additionalProperties?.path} ${e.additionalProperties?.in}: ${e.message}`)
  })

const REDIRECT_REQUIRED = "redirect_uri query: redirect_uri is required."
const REDIRECT_REFUSED = "redirect_uri query: redirect_uri is not on the allowlist (loopback URIs match on any port)."
const STATE_TOO_LONG = "state query: state must be at most 512 characters."
const BAD_CHALLENGE = "code_challenge query: code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 §4.2)."
const BAD_METHOD = "code_challenge_method query: code_challenge_method must be S256 (RFC 7636 §4.2), the only method accepted."

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 60_000 })(`sign-in query over HTTP (${db})`, (it) => {
    it.effect("login: every problem of the query in one 400, redirect_uri beside the others, each at its path", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* refused(`/auth/idp/login?${q({ state: "s".repeat(513) })}`), [REDIRECT_REQUIRED, STATE_TOO_LONG])
        assert.deepStrictEqual(
          yield* refused(`/auth/idp/login?${q({ redirect_uri: "https://evil.example/cb", state: "s".repeat(600), code_challenge: "short", code_challenge_method: "plain" })}`),
          [REDIRECT_REFUSED, STATE_TOO_LONG, BAD_CHALLENGE, BAD_METHOD]
        )
        assert.deepStrictEqual(yield* refused(`/auth/idp/login?${q({ code_challenge: CHALLENGE, code_challenge_method: "plain" })}`), [REDIRECT_REQUIRED, BAD_METHOD])
        assert.deepStrictEqual(yield* refused(`/auth/idp/login?${q({ redirect_uri: CLIENT_REDIRECT, code_challenge: CHALLENGE, code_challenge_method: "" })}`), [BAD_METHOD])
        // The pair: the missing one is named, with the other problems.
        assert.deepStrictEqual(yield* refused(`/auth/idp/login?${q({ redirect_uri: "https://evil.example/cb", code_challenge_method: "S256" })}`), [
          REDIRECT_REFUSED,
          "code_challenge query: code_challenge and code_challenge_method=S256 go together."
        ])
      }))

    it.effect("login: state counts code points (512 emoji pass and reach the client unchanged, 513 do not)", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* refused(`/auth/idp/login?${q({ redirect_uri: CLIENT_REDIRECT, state: EMOJI.repeat(513) })}`), [STATE_TOO_LONG])
        const state = EMOJI.repeat(511) + "x"
        const login = yield* raw({}, `/auth/idp/login?${q({ redirect_uri: CLIENT_REDIRECT, state, code_challenge: CHALLENGE, code_challenge_method: "S256" })}`)
        assert.strictEqual(login.status, 307, yield* Effect.promise(() => login.text()))
        const cookie = login.headers.get("set-cookie")!.split(";")[0]!
        const ours = new URL(login.headers.get("location")!).searchParams.get("state")!
        // Back from the platform without a code: the client's redirect_uri with error and its state, as sent.
        const callback = yield* raw({ headers: { cookie } }, `/auth/idp/callback?${q({ state: ours })}`)
        assert.strictEqual(callback.status, 302)
        assert.strictEqual(new URL(callback.headers.get("location")!).searchParams.get("state"), state)
        assert.strictEqual((yield* raw({}, `/auth/idp/login?${q({ redirect_uri: CLIENT_REDIRECT, state: EMOJI.repeat(512) })}`)).status, 307)
      }))

    it.effect("callback: a refused state is named at its path in the query; its 512 limit counts code points too", () =>
      Effect.gen(function*() {
        const unknown = "state query: The sign-in state is unknown; start the sign-in again."
        const missing = "state query: The sign-in state is missing."
        assert.deepStrictEqual(yield* refused(`/auth/idp/callback?${q({ code: "c", state: "not-a-state" })}`), [unknown])
        assert.deepStrictEqual(yield* refused(`/auth/idp/callback?${q({ code: "c", state: EMOJI.repeat(512) })}`), [unknown])
        assert.deepStrictEqual(yield* refused(`/auth/idp/callback?${q({ code: "c", state: EMOJI.repeat(513) })}`), [missing])
        // Another browser's, and used: the same path.
        const start = Effect.gen(function*() {
          const login = yield* raw({}, `/auth/idp/login?${q({ redirect_uri: CLIENT_REDIRECT })}`)
          return {
            cookie: login.headers.get("set-cookie")!.split(";")[0]!,
            state: new URL(login.headers.get("location")!).searchParams.get("state")!
          }
        })
        const other = yield* start
        assert.deepStrictEqual(yield* refused(`/auth/idp/callback?${q({ state: other.state })}`), [
          "state query: The sign-in state does not belong to this browser (sign-in cookie missing or different); start the sign-in again."
        ])
        const mine = yield* start
        const once = yield* raw({ headers: { cookie: mine.cookie } }, `/auth/idp/callback?${q({ error: "access_denied", state: mine.state })}`)
        assert.strictEqual(once.status, 302)
        const again = yield* raw({ headers: { cookie: mine.cookie } }, `/auth/idp/callback?${q({ error: "access_denied", state: mine.state })}`)
        const body = (yield* json(again)) as { errors: ReadonlyArray<Problem> }
        assert.strictEqual(again.status, 400)
        assert.deepStrictEqual(body.errors.map((e) => [e.message, e.additionalProperties]), [
          ["The sign-in state was already used; start the sign-in again.", { path: "state", in: "query" }]
        ])
      }))

    it.effect("the document states the login's rules that the gateway checks", () =>
      Effect.gen(function*() {
        const doc = yield* json(yield* raw({}, "/openapi.json"))
        const params = Object.fromEntries(
          (doc.paths["/auth/idp/login"].get.parameters as ReadonlyArray<{ name: string; in: string; required: boolean; schema: unknown }>)
            .filter((p) => p.in === "query")
            .map((p) => [p.name, { required: p.required, schema: p.schema }])
        )
        assert.deepStrictEqual(params, {
          redirect_uri: { required: false, schema: { type: "string" } },
          state: { required: false, schema: { type: "string", maxLength: 512 } },
          code_challenge: { required: false, schema: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" } },
          code_challenge_method: { required: false, schema: { type: "string", enum: ["S256"] } }
        })
      }))
  })
}
