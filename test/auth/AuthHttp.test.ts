/**
 * The auth routes through the HttpApi pipeline (in-memory client, raw responses): redirects,
 * the sign-in cookie, Referrer-Policy, Cache-Control, the auth rate limit and its headers.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Cookies, HttpClientRequest, HttpServer } from "effect/http"
import type { HttpClientResponse } from "effect/http"
import { HttpApi, HttpApiMiddleware, HttpApiTest } from "effect/http-api"
import { RateLimiter } from "effect/persistence"
import { AuthGroup } from "../../src/http/contract/Api.ts"
import { AuthRateLimitLive } from "../../src/http/edge/AuthRateLimit.ts"
import { SchemaErrorsLive } from "../../src/http/edge/SchemaErrorsLive.ts"
import { AuthHandlers } from "../../src/http/auth/AuthHandlers.ts"
import { Authorization, AuthRateLimit, SchemaErrors } from "../../src/http/contract/Middleware.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { stub } from "../layers/Stub.ts"
import { authLayer, makeFakePlatform, testConfig } from "./AuthFixtures.ts"

const CLIENT = "https://client.example/callback"

/** The browser's cookie header for the next auth request (the callback endpoint declares no headers). */
let browserCookie: string | undefined

/** Not under test here: the `/api` groups are never called. */
const NoAuthorization = stub(Authorization, {})
const Clients = Layer.mergeAll(
  HttpApiMiddleware.layerClient(AuthRateLimit, ({ next, request }) =>
    next(browserCookie === undefined ? request : HttpClientRequest.setHeader(request, "cookie", browserCookie))),
  HttpApiMiddleware.layerClient(Authorization, ({ next, request }) => next(request))
)

const app = (config = testConfig()) => {
  const fake = makeFakePlatform()
  const env = AuthHandlers.pipe(
    Layer.provideMerge(Layer.mergeAll(
      AuthRateLimitLive.pipe(Layer.provide(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)))),
      SchemaErrorsLive,
      NoAuthorization,
      Clients
    )),
    // Auth, its store (also the rate limit's: the family key) and the settings.
    Layer.provideMerge(authLayer(TokenStoreMemory, fake, config)),
    Layer.provideMerge(HttpServer.layerServices)
  )
  return { fake, env }
}

// The auth group alone, under the API's id (so the handlers of `Api` serve it).
const AuthApi = HttpApi.make("gateway").add(AuthGroup).middleware(SchemaErrors)
const makeClient = HttpApiTest.groups(AuthApi, ["auth"])
const cookieOf = (res: HttpClientResponse.HttpClientResponse) =>
  res.headers["set-cookie"] ?? Cookies.toSetCookieHeaders(res.cookies).join("\n")

const main = app()
layer(main.env)("auth routes over HTTP", (it) => {
  it.effect("login → 307 to the platform with the sign-in cookie; callback → 302 to the client with Referrer-Policy", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      const login = yield* client.auth.login({ query: { redirect_uri: CLIENT, state: "xyz" }, responseMode: "response-only" })
      assert.strictEqual(login.status, 307)
      const location = login.headers["location"]!
      assert.match(location, /^https:\/\/platform\.test\/oauth2\/authorize\?/)
      const setCookie = cookieOf(login)
      assert.match(setCookie, /^__Host-bmg_signin=[A-Za-z0-9_-]{43};/)
      assert.match(setCookie, /HttpOnly/)
      assert.match(setCookie, /Secure/)
      assert.match(setCookie, /SameSite=Lax/i)
      assert.match(setCookie, /Path=\//)
      assert.match(setCookie, /Max-Age=600/)
      assert.notMatch(setCookie, /Domain=/i)
      assert.strictEqual(login.headers["cache-control"], "no-store")
      assert.strictEqual(login.headers["ratelimit-policy"], "\"auth\";q=120;w=3600")
      assert.match(login.headers["ratelimit"]!, /^"auth";r=119;t=\d+$/)

      const back = main.fake.approve(location)
      browserCookie = setCookie.split(";")[0]!
      const cb = yield* client.auth.callback({ query: { code: back.code, state: back.state }, responseMode: "response-only" })
      browserCookie = undefined
      assert.strictEqual(cb.status, 302)
      assert.strictEqual(cb.headers["referrer-policy"], "no-referrer")
      const target = new URL(cb.headers["location"]!)
      assert.strictEqual(target.origin + target.pathname, CLIENT)
      assert.strictEqual(target.searchParams.get("state"), "xyz")
      assert.match(target.searchParams.get("code")!, /^bmg_tt_/)
      assert.match(cookieOf(cb), /Max-Age=0|Expires=Thu, 01 Jan 1970/)

      const tokens = yield* client.auth.token({ headers: { authorization: target.searchParams.get("code")! }, responseMode: "response-only" })
      assert.strictEqual(tokens.status, 200)
      assert.strictEqual(tokens.headers["cache-control"], "no-store")
    }))

  it.effect("login without or with a bad redirect_uri → 400, never a redirect", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      for (const query of [{}, { redirect_uri: "https://evil.example/callback" }, { redirect_uri: "http://good@evil/callback" }]) {
        const res = yield* client.auth.login({ query, responseMode: "response-only" })
        assert.strictEqual(res.status, 400)
        assert.isUndefined(res.headers["location"])
        assert.isUndefined(res.headers["set-cookie"])
      }
    }))

  it.effect("callback with the state of another browser → 400 and the platform is not called", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      const before = main.fake.calls.exchangeCode
      const login = yield* client.auth.login({ query: { redirect_uri: CLIENT }, responseMode: "response-only" })
      const back = main.fake.approve(login.headers["location"]!)
      browserCookie = "__Host-bmg_signin=someone-else"
      const res = yield* client.auth.callback({ query: { code: back.code, state: back.state }, responseMode: "response-only" })
      browserCookie = undefined
      assert.strictEqual(res.status, 400)
      assert.strictEqual(main.fake.calls.exchangeCode, before)
    }))
})

describe("auth rate limit", () => {
  const limited = app(testConfig({ rateLimitAuthPerHour: 3 }))
  layer(limited.env)("auth rate limit", (it) => {
    it.effect("counts every /auth request, failures too; the next one is 429 with Retry-After", () =>
      Effect.gen(function*() {
        const client = yield* makeClient
        for (let i = 0; i < 3; i++) {
          const res = yield* client.auth.check({ headers: {}, responseMode: "response-only" })
          assert.strictEqual(res.status, 401)
          assert.strictEqual(res.headers["ratelimit"]?.startsWith(`"auth";r=${2 - i};t=`), true)
        }
        const res = yield* client.auth.revoke({ headers: {}, responseMode: "response-only" })
        assert.strictEqual(res.status, 429)
        assert.match(res.headers["retry-after"]!, /^\d+$/)
        assert.strictEqual(res.headers["ratelimit-policy"], "\"auth\";q=3;w=3600")
        const body = (yield* res.json) as { errors: Array<{ code: string; additionalProperties?: { retry_after?: number } }> }
        assert.strictEqual(body.errors[0]!.code, "Too Many Requests")
        assert.strictEqual(body.errors[0]!.additionalProperties?.retry_after, Number(res.headers["retry-after"]))
      }))
  })
})
