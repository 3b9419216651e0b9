/**
 * Issue #30 item 5 at the HTTP edge, as a client sees it: ill-formed Unicode — bytes that are not
 * UTF-8 in a JSON body, a lone surrogate escape (`"\ud800"`) in any string, or a percent-encoded
 * parameter that is not UTF-8 — is a 400 in the envelope naming where it is, and nothing is stored
 * altered (U+FFFD in its place).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { formBody, text } from "./ContractFixtures.ts"
import { decodeEnvelope, FORMS, MODULES } from "./HardeningFixtures.ts"

const FEEDS = `${MODULES}/microblog/feeds`
const CHANNEL = "310000000000000102"

/** The 400's problems (path, message), after checking it is the envelope. */
const badRequest = (res: Response) =>
  Effect.gen(function*() {
    const body = yield* text(res)
    assert.strictEqual(res.status, 400, `${res.url} → ${res.status}: ${body}`)
    const envelope = decodeEnvelope(body)
    for (const item of envelope.errors) assert.strictEqual(item.code, "Bad Request")
    return envelope.errors.map((e) => ({ path: e.additionalProperties?.["path"], message: e.message }))
  })
const paths = (res: Response) => Effect.map(badRequest(res), (ps) => ps.map((p) => p.path))

const send = (token: string, body: string | Uint8Array<ArrayBuffer>, method = "POST") => ({
  method,
  token,
  headers: { "content-type": "application/json" },
  body
})

/** A JSON text with `\ud800` (six characters) where `LONE` stands: JSON.stringify would escape the backslash. */
const LONE = "@@LONE@@"
const withLone = (value: unknown, escape = "\\ud800") => JSON.stringify(value).replaceAll(LONE, escape)

/** The bytes of a JSON text with the byte 0xFF where `BAD` stands (never valid in UTF-8). */
const BAD = "@@BAD@@"
const withBadByte = (value: unknown) => {
  const [before, after] = JSON.stringify(value).split(BAD) as [string, string]
  const enc = new TextEncoder()
  return new Uint8Array([...enc.encode(before), 0xff, ...enc.encode(after)]) as Uint8Array<ArrayBuffer>
}

/** Every form title and feed identifier the server holds, as a client reads them back. */
const stored = (token: string) =>
  Effect.gen(function*() {
    const forms = yield* json(yield* raw({ token }, FORMS))
    const feeds = yield* json(yield* raw({ token }, FEEDS))
    return JSON.stringify({ forms, feeds })
  })

layer(TestApp.layer({ capabilities: { db: "pglite" } }), { excludeTestServices: true, timeout: 120_000 })("ill-formed Unicode", (it) => {
  it.effect("a lone surrogate in a form body (create and update): 400 at the field, nothing stored", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const before = yield* stored(t)
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(formBody(LONE))), FORMS)), ["title"])
      // A low surrogate alone, and a high one followed by a plain letter: both lone.
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(formBody(`a${LONE}`), "\\uDC00")), FORMS)), ["title"])
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(formBody(`${LONE}x`), "\\uDBFF")), FORMS)), ["title"])

      const nested = formBody("nested") as { steps: Array<Record<string, unknown>> }
      nested.steps[0] = { ...nested.steps[0]!, string: `What${LONE}?` }
      nested.steps[1] = { ...nested.steps[1]!, answers_validation: ["yes", LONE] }
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(nested)), FORMS)), [
        "steps[0].string",
        "steps[1].answers_validation[1]"
      ])
      // With the body's other problems in the same answer.
      const both = yield* paths(yield* raw(send(t, withLone({ ...formBody(LONE), color_hex: "red" })), FORMS))
      assert.sameMembers(both, ["title", "color_hex"])

      const created = yield* raw(send(t, JSON.stringify(formBody("to update"))), FORMS)
      const createdText = yield* text(created)
      assert.strictEqual(created.status, 200, createdText)
      const formId = String(JSON.parse(createdText).workflow_id)
      const afterCreate = yield* stored(t)
      const patched = yield* badRequest(yield* raw(send(t, withLone({ title: LONE }), "PATCH"), `${FORMS}/${formId}`))
      assert.deepStrictEqual(patched.map((p) => p.path), ["title"])
      assert.match(patched[0]!.message, /^title: .*surrogate/)
      assert.strictEqual(yield* stored(t), afterCreate, "the update changed nothing")
      assert.notInclude(afterCreate, "\\ufffd")
      assert.notInclude(afterCreate, "\ufffd")
      assert.notStrictEqual(before, afterCreate)
    }))

  it.effect("a well-formed pair of surrogate escapes (an emoji) is stored as sent", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const res = yield* raw(send(t, withLone(formBody(`smile ${LONE}`), "\\ud83d\\ude00")), FORMS)
      const answer = yield* text(res)
      assert.strictEqual(res.status, 200, answer)
      assert.strictEqual(JSON.parse(answer).title, "smile \u{1F600}")
    }))

  it.effect("bytes that are not UTF-8 in a form or feed body: 400 for the body as a whole, nothing stored", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const before = yield* stored(t)
      for (const [method, path, body] of [
        ["POST", FORMS, formBody(`caf${BAD}`)],
        ["PATCH", `${FORMS}/1`, { title: BAD }],
        ["POST", FEEDS, { feed_identifier: `sandbox${BAD}bird`, webhook_channel: CHANNEL }],
        ["PATCH", `${FEEDS}/1`, { webhook_options: { filter_words: [BAD] } }]
      ] as const) {
        const problems = yield* badRequest(yield* raw(send(t, withBadByte(body), method), path))
        assert.deepStrictEqual(problems.map((p) => p.path), [undefined], `${method} ${path}`)
        assert.match(problems[0]!.message, /body is not valid UTF-8/)
      }
      assert.strictEqual(yield* stored(t), before)
    }))

  it.effect("a lone surrogate in a feed body (create and update): 400 at the field, nothing stored", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const before = yield* stored(t)
      const identifier = { feed_identifier: `sandbox${LONE}bird`, webhook_channel: CHANNEL }
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(identifier)), FEEDS)), ["feed_identifier"])
      const words = { feed_identifier: "sandboxbird", webhook_channel: CHANNEL, webhook_options: { filter_words: ["ok", LONE] } }
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(words)), FEEDS)), ["webhook_options.filter_words[1]"])
      assert.strictEqual(yield* stored(t), before)

      const created = yield* raw(send(t, JSON.stringify({ ...words, webhook_options: { filter_words: ["ok"] } })), FEEDS)
      const createdText = yield* text(created)
      assert.strictEqual(created.status, 200, createdText)
      const feedId = String(JSON.parse(createdText).id)
      const afterCreate = yield* stored(t)
      const update = { webhook_options: { filter_words: ["ok", LONE] } }
      assert.deepStrictEqual(yield* paths(yield* raw(send(t, withLone(update), "PATCH"), `${FEEDS}/${feedId}`)), [
        "webhook_options.filter_words[1]"
      ])
      assert.strictEqual(yield* stored(t), afterCreate, "the update changed nothing")
    }))

  it.effect("a lone surrogate in an object key: 400 at the key, shown escaped", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const key = yield* paths(yield* raw(send(t, withLone({ ...formBody("k"), [`x${LONE}`]: 1 })), FORMS))
      assert.deepStrictEqual(key, ["x\\ud800"])
    }))

  it.effect("a query parameter that is not UTF-8 once decoded: 400 naming it; well-formed ones still read", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      const logs = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/logs`
      assert.deepStrictEqual(yield* paths(yield* raw({ token: t }, `${logs}?module=a%C3`)), ["module"])
      // %ED%A0%80 is U+D800 encoded as UTF-8: a surrogate, never valid.
      assert.deepStrictEqual(yield* paths(yield* raw({ token: t }, `${logs}?module=a%ED%A0%80&user=%FF`)), ["module", "user"])
      // Also where no token is needed.
      assert.deepStrictEqual(yield* paths(yield* raw({}, "/auth/idp/callback?code=x%FF&state=y")), ["code"])
      // A well-formed one reaches the endpoint's own checks, decoded.
      const ok = yield* badRequest(yield* raw({ token: t }, `${logs}?module=caf%C3%A9`))
      assert.deepStrictEqual(ok.map((p) => p.path), ["module"])
      assert.match(ok[0]!.message, /must be one of/)
    }))

  it.effect("a path segment that is not UTF-8 once decoded: 400 for the path (it routes nowhere), never a 404 or 5xx", () =>
    Effect.gen(function*() {
      const t = yield* tokenOf(ALICE_ID)
      for (const segment of ["sandbox%FFbird", "a%ED%A0%80", "a%C3"]) {
        const res = yield* raw({ token: t }, `${MODULES}/microblog/getUserId/${segment}`)
        const body = yield* text(res)
        assert.strictEqual(res.status, 400, body)
        const [item] = decodeEnvelope(body).errors
        assert.deepStrictEqual(item!.additionalProperties, { in: "params" })
        assert.match(item!.message, /not valid UTF-8/)
      }
    }))
})
