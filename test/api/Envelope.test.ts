/**
 * decisions.md "Errors" over real HTTP: every non-2xx answer is the envelope with the reason phrase
 * as `code` and `Content-Type: application/json`; X-Request-Id on every answer; the token header
 * forms; `Cache-Control: no-store`. Maintenance, the per-user rate limit and a defect's 500:
 * EnvelopeMaintenance, EnvelopeRateLimit and EnvelopeDefects.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import type { ErrorItem } from "../../src/domain/infra/Errors.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { raw, signIn, TestApp, UA } from "../utils/TestApp.ts"
import { formBody, text } from "./ContractFixtures.ts"
import { checkEnvelope, expectEnvelope, FORMS, MODULES } from "./EnvelopeFixtures.ts"

const MiB = 1024 * 1024

/** A request through node:http, which (unlike fetch) sends no User-Agent of its own and lets a body stay unfinished. */
interface RawAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
}
const nodeRequest = (options: {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  /** Chunks to write; with `end: false` the body is left unfinished. */
  readonly chunks?: ReadonlyArray<string>
  readonly end?: boolean
}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.callback<RawAnswer, Error>((resume) => {
      const req = httpRequest(app.url + options.path, { method: options.method, headers: options.headers }, (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => body += c)
        res.on("end", () => {
          resume(Effect.succeed({ status: res.statusCode!, headers: res.headers, body }))
          req.destroy()
        })
      })
      // The server may answer and close while we still write: that is the point of the 413 cases.
      req.on("error", (e) => resume(Effect.fail(e)))
      for (const chunk of options.chunks ?? []) req.write(chunk)
      if (options.end !== false) req.end()
    })
  })

const jsonPost = (token: string, body: string, method = "POST") => ({
  method,
  token,
  headers: { "content-type": "application/json" },
  body
})

const paths = (items: ReadonlyArray<ErrorItem>) => items.map((i) => i.additionalProperties?.["path"])

// ---------------------------------------------------------------------------------------------

layer(TestApp.layer({ capabilities: { db: "pglite" } }), { excludeTestServices: true, timeout: 60_000 })("error envelope", (it) => {
  it.effect("unknown route: 404, with or without a token, under /api, /auth and elsewhere", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      for (const path of ["/api/v1/nope", "/api/v2/user", "/auth/idp/nope", "/nope"]) {
        yield* expectEnvelope(yield* raw({}, path), 404)
        yield* expectEnvelope(yield* raw({ token: t }, path), 404)
      }
    }))

  it.effect("wrong method on a known path: 404", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      yield* expectEnvelope(yield* raw({ method: "PUT", token: t }, "/api/v1/user"), 404)
      yield* expectEnvelope(yield* raw({ method: "DELETE", token: t }, "/api/v1/bots"), 404)
      yield* expectEnvelope(yield* raw({ method: "GET", token: t }, "/auth/idp/token"), 404)
      yield* expectEnvelope(yield* raw(jsonPost(t, "{}", "PUT"), `${FORMS}/1`), 404)
    }))

  it.effect("malformed JSON body: 400", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const [item] = yield* expectEnvelope(yield* raw(jsonPost(t, '{"title": "x",'), FORMS), 400)
      assert.match(item!.message, /json|body/i)
    }))

  it.effect("schema failure: 400 with one element and path per problem", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const good = formBody("x").steps
      const body = {
        title: "",
        color_hex: "red",
        steps: [...good, { type: "message", string: "Third", char_limit: [0, 3000] }]
      }
      const items = yield* expectEnvelope(yield* raw(jsonPost(t, JSON.stringify(body)), FORMS), 400)
      assert.sameMembers(paths(items), ["title", "color_hex", "steps[2].char_limit"], JSON.stringify(items))
      for (const item of items) assert.include(item.message, String(item.additionalProperties!["path"]))
    }))

  it.effect("feed body with an option of another module: 400 naming the option", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const body = { feed_identifier: "sandboxbird", webhook_channel: "310000000000000102", webhook_options: { filter_game: ["Art"] } }
      const items = yield* expectEnvelope(yield* raw(jsonPost(t, JSON.stringify(body)), `${MODULES}/microblog/feeds`), 400)
      assert.deepStrictEqual(paths(items), ["webhook_options.filter_game"])
    }))

  it.effect("missing User-Agent: 400 on /api and /auth", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      for (const path of ["/api/v1/user", "/auth/idp/token/check"]) {
        const res = yield* nodeRequest({
          method: path.startsWith("/auth") ? "POST" : "GET",
          path,
          headers: { authorization: t }
        })
        assert.strictEqual(res.status, 400, res.body)
        const [item] = checkEnvelope(400, res.headers["content-type"] as string, res.headers["x-request-id"], res.body)
        assert.match(item!.message, /User-Agent/)
      }
    }))

  it.effect("a body that is not JSON on POST and PATCH: 415", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      for (const method of ["POST", "PATCH"]) {
        const path = method === "POST" ? FORMS : `${FORMS}/1`
        for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
          const res = yield* raw({ method, token: t, headers: { "content-type": type }, body: JSON.stringify(formBody("x")) }, path)
          yield* expectEnvelope(res, 415)
        }
      }
    }))

  it.effect("a body over 1 MiB: 413, answered before the body is sent in full", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const headers = { "user-agent": UA, authorization: t, "content-type": "application/json" }
      // Declared 2 MiB, only 64 KiB sent and the body never finished: the answer must come anyway.
      const declared = yield* nodeRequest({
        method: "POST",
        path: FORMS,
        headers: { ...headers, "content-length": String(2 * MiB) },
        chunks: ["[" + " ".repeat(64 * 1024)],
        end: false
      }).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual(declared.status, 413, declared.body)
      checkEnvelope(413, declared.headers["content-type"] as string, declared.headers["x-request-id"], declared.body)

      // No Content-Length (chunked): the limit still applies.
      const filler = `{"title":"${"x".repeat(MiB + 1024)}"}`
      const chunked = yield* nodeRequest({
        method: "POST",
        path: FORMS,
        headers: { ...headers, "transfer-encoding": "chunked" },
        chunks: [filler.slice(0, MiB / 2), filler.slice(MiB / 2)]
      }).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual(chunked.status, 413, chunked.body)
      checkEnvelope(413, chunked.headers["content-type"] as string, chunked.headers["x-request-id"], chunked.body)
    }))

  it.effect("no token: 401 with WWW-Authenticate", () =>
    Effect.gen(function*() {
      const res = yield* raw({}, "/api/v1/user")
      assert.strictEqual(res.headers.get("www-authenticate"), 'Bearer error="invalid_token"')
      yield* expectEnvelope(res, 401)
    }))

  const forms = (token: string): ReadonlyArray<[string, Record<string, string>]> => [
    ["Authorization: t", { authorization: token }],
    ["Authorization: Bearer t", { authorization: `Bearer ${token}` }],
    ["X-Access-Token: t", { "x-access-token": token }],
    ["X-Access-Token: Bearer t", { "x-access-token": `Bearer ${token}` }]
  ]

  it.effect("a bad token in each of the four header forms: 401", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      // A well-formed token that was never issued, and a real one with one character changed.
      const forged = t.slice(0, -1) + (t.endsWith("A") ? "B" : "A")
      for (const bad of ["bmg_at_neverissued0000000000000000000000000000", forged]) {
        for (const [name, headers] of forms(bad)) {
          const res = yield* raw({ headers }, "/api/v1/user")
          assert.strictEqual(res.headers.get("www-authenticate"), 'Bearer error="invalid_token"', name)
          yield* expectEnvelope(res, 401)
        }
      }
    }))

  it.effect("a good token in each of the four header forms: 200", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      for (const [name, headers] of forms(t)) {
        const res = yield* raw({ headers }, "/api/v1/user")
        const body = yield* text(res)
        assert.strictEqual(res.status, 200, `${name}: ${body}`)
        assert.strictEqual(JSON.parse(body).id, ALICE_ID, name)
      }
    }))

  it.effect("X-Request-Id: on every answer; a sane one is echoed, an insane one replaced", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const answers = [
        yield* raw({ token: t }, "/api/v1/user"),
        yield* raw({}, "/api/v1/user"),
        yield* raw({}, "/nope"),
        yield* raw({}, "/healthz"),
        yield* raw({ method: "POST", headers: { authorization: t } }, "/auth/idp/token/check")
      ]
      const ids = answers.map((r) => r.headers.get("x-request-id"))
      for (const id of ids) assert.isString(id)
      assert.strictEqual(new Set(ids).size, ids.length, "generated ids are unique")

      for (const path of ["/api/v1/user", "/nope"]) {
        const echoed = yield* raw({ token: t, headers: { "x-request-id": "client-req.42:a_b-c" } }, path)
        assert.strictEqual(echoed.headers.get("x-request-id"), "client-req.42:a_b-c")
      }
      for (const insane of ["has space", "x".repeat(200), "<script>"]) {
        const replaced = yield* raw({ token: t, headers: { "x-request-id": insane } }, "/api/v1/user")
        const id = replaced.headers.get("x-request-id")
        assert.isString(id)
        assert.notStrictEqual(id, insane)
      }
    }))

  it.effect("token answers carry Cache-Control: no-store", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      const answers = [
        yield* raw({ method: "POST", headers: { authorization: tokens.access_token } }, "/auth/idp/token/check"),
        yield* raw({ method: "POST", headers: { "x-refresh-token": tokens.refresh_token } }, "/auth/idp/token/refresh"),
        yield* raw({ method: "POST", headers: { authorization: "bmg_tt_unknown" } }, "/auth/idp/token")
      ]
      assert.deepStrictEqual(answers.map((r) => r.status), [200, 200, 401])
      for (const res of answers) assert.match(res.headers.get("cache-control") ?? "", /no-store/)
      const refreshed = yield* Effect.promise(() => answers[1]!.json() as Promise<{ access_token: string }>)
      const revoke = yield* raw({ method: "POST", headers: { authorization: refreshed.access_token } }, "/auth/idp/token/revoke")
      assert.strictEqual(revoke.status, 200)
      assert.match(revoke.headers.get("cache-control") ?? "", /no-store/)
    }))
})
