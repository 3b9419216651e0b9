/** Text limits count Unicode code points (decisions.md "Errors"): forms and feeds alike. */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { FeedModules } from "../../src/domain/feeds/Feed.ts"
import { FormInput } from "../../src/domain/forms/Form.ts"
import { codePoints, text } from "../../src/domain/infra/Text.ts"

const EMOJI = "\u{1F600}" // one code point, two UTF-16 units
const ok = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, value: unknown) =>
  Result.isSuccess(Schema.decodeUnknownResult(schema)(value))

describe("Text", () => {
  it("codePoints counts an emoji as one", () => {
    assert.strictEqual(codePoints(""), 0)
    assert.strictEqual(codePoints("abc"), 3)
    assert.strictEqual(codePoints(EMOJI.repeat(600)), 600)
    assert.strictEqual(EMOJI.repeat(600).length, 1200)
    assert.strictEqual(codePoints("e\u0301"), 2) // code points, not graphemes
  })

  it("text(min, max): bounds in code points, messages in words", () => {
    const t = text(1, 3)
    assert.isTrue(ok(t, EMOJI.repeat(3)))
    assert.isFalse(ok(t, EMOJI.repeat(4)))
    assert.isFalse(ok(t, ""))
    const r = Schema.decodeUnknownResult(t)(EMOJI.repeat(4))
    assert.isTrue(Result.isFailure(r))
    assert.include(String(Result.isFailure(r) ? r.failure.message : ""), "expected a text of 1 to 3 characters")
  })

  it("every text limit of forms and feeds counts code points", () => {
    assert.isTrue(ok(FormInput, { title: EMOJI.repeat(256), steps: [{ type: "message", string: EMOJI.repeat(2000), alias: EMOJI.repeat(256), answers_validation: [EMOJI.repeat(100)] }] }))
    assert.isFalse(ok(FormInput, { title: EMOJI.repeat(257) }))
    const rss = FeedModules.rss.create
    const options = { custom_header: EMOJI.repeat(1024), "webhook-name": EMOJI.repeat(32), filter_words: [EMOJI.repeat(100)] }
    assert.isTrue(ok(rss, { feed_identifier: EMOJI.repeat(2048), webhook_channel: "1", webhook_options: options }))
    for (const [key, value] of [["custom_header", EMOJI.repeat(1025)], ["webhook-name", EMOJI.repeat(33)], ["filter_words", [EMOJI.repeat(101)]]] as const) {
      assert.isFalse(ok(rss, { feed_identifier: "x", webhook_channel: "1", webhook_options: { ...options, [key]: value } }), key)
    }
    assert.isFalse(ok(rss, { feed_identifier: EMOJI.repeat(2049), webhook_channel: "1" }))
  })
})
