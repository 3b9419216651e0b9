/**
 * Issue #12 at the HTTP edge, as a client sees it: U+0000 anywhere a client can put one (body at any
 * depth, query, path, cookie) → 400 at its path, never a 5xx.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { formBody, text } from "./ContractFixtures.ts"
import { decodeEnvelope, FORMS, LOGIN, MODULES } from "./HardeningFixtures.ts"

/** PostgreSQL when the run has one (where the fuzz found the 500s and 503s), else PGlite: both refuse U+0000. */
const DB = dbKinds.includes("postgres") ? "postgres" as const : "pglite" as const

/** The 400's problem paths, after checking it is the envelope. */
const badRequestPaths = (res: Response) =>
  Effect.gen(function*() {
    const body = yield* text(res)
    assert.strictEqual(res.status, 400, `${res.url} → ${res.status}: ${body}`)
    const envelope = decodeEnvelope(body)
    for (const item of envelope.errors) assert.strictEqual(item.code, "Bad Request")
    return envelope.errors.map((e) => e.additionalProperties?.["path"])
  })

const post = (token: string, body: string, method = "POST") => ({
  method,
  token,
  headers: { "content-type": "application/json" },
  body
})

layer(TestApp.layer({ capabilities: { db: DB } }), { excludeTestServices: true, timeout: 120_000 })(`U+0000 (${DB})`, (it) => {
  it.effect("in a JSON body, at any depth: 400 at the field, with the request's other problems", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(formBody("a\u0000b"))), FORMS)), ["title"])

      const nested = formBody("nested") as { steps: Array<Record<string, unknown>> }
      nested.steps[1] = { ...nested.steps[1]!, string: "Pick\u0000one" }
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(nested)), FORMS)), ["steps[1].string"])

      const answers = formBody("answers") as { steps: Array<Record<string, unknown>> }
      answers.steps[1] = { ...answers.steps[1]!, answers_validation: ["yes", "n\u0000o"] }
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(answers)), FORMS)), ["steps[1].answers_validation[1]"])

      // Every problem in one answer: the U+0000 and a schema failure elsewhere.
      const both = { ...formBody("t\u0000"), color_hex: "red" }
      assert.sameMembers(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(both)), FORMS)), ["title", "color_hex"])

      // On update too, and in an object key.
      const patched = yield* badRequestPaths(yield* raw(post(t, JSON.stringify({ title: "ok\u0000" }), "PATCH"), `${FORMS}/1`))
      assert.deepStrictEqual(patched, ["title"])
      const key = yield* raw(post(t, JSON.stringify({ ...formBody("k"), "x\u0000y": 1 })), FORMS)
      assert.deepStrictEqual(yield* badRequestPaths(key), ["x\\u0000y"])
    }))

  it.effect("in a feed body: 400 at the field", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const feeds = `${MODULES}/microblog/feeds`
      const identifier = { feed_identifier: "sandbox\u0000bird", webhook_channel: "310000000000000102" }
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(identifier)), feeds)), ["feed_identifier"])
      const words = { feed_identifier: "sandboxbird", webhook_channel: "310000000000000102", webhook_options: { filter_words: ["ok", "a\u0000"] } }
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw(post(t, JSON.stringify(words)), feeds)), ["webhook_options.filter_words[1]"])
    }))

  it.effect("in a query parameter: 400 at the parameter, also where no token is needed", () =>
    Effect.gen(function*() {
      const login = yield* raw({}, `${LOGIN}&state=a%00b`)
      const [item] = decodeEnvelope(yield* text(login)).errors
      assert.strictEqual(login.status, 400, JSON.stringify(item))
      assert.deepStrictEqual(item!.additionalProperties, { path: "state", in: "query" })
      assert.isNull(login.headers.get("retry-after"), "not a 503 in disguise")

      assert.deepStrictEqual(yield* badRequestPaths(yield* raw({}, "/auth/idp/callback?code=x%00&state=y")), ["code"])
      const t = yield* tokenOf(ALICE_ID)
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw({ token: t }, `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/logs?module=a%00`)), ["module"])
    }))

  it.effect("in a path parameter and in a cookie: 400 naming it", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      assert.deepStrictEqual(yield* badRequestPaths(yield* raw({ token: t }, `${MODULES}/microblog/getUserId/sandbox%00bird`)), ["userName"])
      const callback = yield* raw({ headers: { cookie: "bmg_signin=abc%00def" } }, "/auth/idp/callback?code=x&state=y")
      assert.deepStrictEqual(yield* badRequestPaths(callback), ["bmg_signin"])
    }))

  it.effect("a bounded sweep: U+0000 in each field of each writing route is a 400, never a 5xx", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const feed = { feed_identifier: "sandboxbird", webhook_channel: "310000000000000102", webhook_options: { filter_words: ["a"] } }
      const cases: Array<readonly [string, string, Record<string, unknown>]> = [
        ["POST", FORMS, formBody("sweep")],
        ["PATCH", `${FORMS}/1`, { title: "x", steps: formBody("x").steps }],
        ["POST", `${MODULES}/microblog/feeds`, feed],
        ["PATCH", `${MODULES}/microblog/feeds/1`, feed]
      ]
      const poison = (value: unknown): Array<unknown> =>
        typeof value === "string"
          ? [`${value}\u0000`]
          : Array.isArray(value)
          ? value.flatMap((v, i) => poison(v).map((p) => value.map((w, j) => j === i ? p : w)))
          : typeof value === "object" && value !== null
          ? Object.entries(value).flatMap(([k, v]) => poison(v).map((p) => ({ ...value, [k]: p })))
          : []
      let sent = 0
      for (const [method, path, body] of cases) {
        for (const variant of poison(body)) {
          const res = yield* raw(post(t, JSON.stringify(variant), method), path)
          const answer = yield* text(res)
          assert.strictEqual(res.status, 400, `${method} ${path} ${JSON.stringify(variant)} → ${res.status}: ${answer}`)
          sent++
        }
      }
      assert.isAbove(sent, 20)
    }))
})
