/**
 * What the Envelope*.test.ts files share (decisions.md "Errors" over real HTTP): the forms route, and
 * the check that an answer is the envelope with the reason phrase as `code`, JSON, and a request id.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Envelope, reasonPhrase } from "../../src/domain/infra/Errors.ts"
import { BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { text } from "./ContractFixtures.ts"

export const MODULES = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules`
export const FORMS = `${MODULES}/forms`

/** Asserts an envelope answer: status, JSON content type, exact envelope, reason phrase, request id. */
export const expectEnvelope = (res: Response, status: number) =>
  Effect.gen(function*() {
    const body = yield* text(res)
    assert.strictEqual(res.status, status, `${res.url} → ${res.status}: ${body}`)
    return checkEnvelope(status, res.headers.get("content-type"), res.headers.get("x-request-id"), body)
  })

export const checkEnvelope = (status: number, contentType: string | null | undefined, requestId: unknown, body: string) => {
  assert.match(contentType ?? "", /^application\/json/, body)
  assert.isString(requestId, "every answer carries X-Request-Id")
  const envelope = Schema.decodeUnknownSync(Envelope)(JSON.parse(body), { onExcessProperty: "error" })
  assert.isAbove(envelope.errors.length, 0)
  for (const item of envelope.errors) {
    assert.strictEqual(item.code, reasonPhrase[status])
    assert.isAbove(item.message.length, 0)
  }
  return envelope.errors
}
