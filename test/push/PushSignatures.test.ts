/**
 * The push signatures (services/push/PushSignatures.ts): WebSub's X-Hub-Signature over the body and
 * EventSub's HMAC-SHA256 over id + timestamp + body, each accepted only when every byte matches,
 * and EventSub's 10-minute window.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  eventsubFresh,
  eventsubSignature,
  eventsubSignatureValid,
  websubSignature,
  websubSignatureValid
} from "../../src/services/push/PushSignatures.ts"

const enc = (s: string) => new TextEncoder().encode(s)

describe("WebSub X-Hub-Signature", () => {
  const body = "<feed><entry>v1</entry></feed>"
  const cases: ReadonlyArray<readonly [string, string | undefined, string, boolean]> = [
    ["sha1 of the body with the secret", websubSignature("s3cret", body), body, true],
    ["sha256 of the body with the secret", websubSignature("s3cret", body, "sha256"), body, true],
    ["upper-case hex", websubSignature("s3cret", body).toUpperCase().replace("SHA1", "sha1"), body, true],
    ["another secret", websubSignature("other", body), body, false],
    ["another body", websubSignature("s3cret", body), `${body} `, false],
    ["no header", undefined, body, false],
    ["no algorithm", websubSignature("s3cret", body).slice(5), body, false],
    ["an algorithm WebSub does not allow", `md5=${"0".repeat(32)}`, body, false],
    ["truncated", websubSignature("s3cret", body).slice(0, -2), body, false],
    ["not hex", "sha1=zz", body, false]
  ]
  for (const [name, header, got, ok] of cases) {
    it(`${name}: ${ok ? "valid" : "refused"}`, () => assert.strictEqual(websubSignatureValid(header, "s3cret", enc(got)), ok))
  }
})

describe("EventSub message signature", () => {
  const id = "e76c6bd4-55c9-4987-8304-da1588d8988b"
  const at = "2026-01-01T00:00:00.123456789Z"
  const body = "{\"subscription\":{\"type\":\"stream.online\"}}"
  const good = eventsubSignature("0123456789abcdef", id, at, body)
  it("valid over id + timestamp + body", () => assert.isTrue(eventsubSignatureValid(good, "0123456789abcdef", id, at, enc(body))))
  it("refused with another id, timestamp, body or secret", () => {
    assert.isFalse(eventsubSignatureValid(good, "0123456789abcdef", `${id}x`, at, enc(body)))
    assert.isFalse(eventsubSignatureValid(good, "0123456789abcdef", id, "2026-01-01T00:00:01Z", enc(body)))
    assert.isFalse(eventsubSignatureValid(good, "0123456789abcdef", id, at, enc(`${body} `)))
    assert.isFalse(eventsubSignatureValid(good, "fedcba9876543210", id, at, enc(body)))
  })
  it("refused with sha1 or without the prefix", () => {
    assert.isFalse(eventsubSignatureValid(good.replace("sha256=", "sha1="), "0123456789abcdef", id, at, enc(body)))
    assert.isFalse(eventsubSignatureValid(good.replace("sha256=", ""), "0123456789abcdef", id, at, enc(body)))
  })
  it("fresh within 10 minutes either way, not after, nor unparsable", () => {
    const now = Date.parse("2026-01-01T00:10:00Z")
    assert.isTrue(eventsubFresh("2026-01-01T00:00:00Z", now))
    assert.isFalse(eventsubFresh("2025-12-31T23:59:59Z", now))
    assert.isTrue(eventsubFresh("2026-01-01T00:20:00Z", now))
    assert.isFalse(eventsubFresh("2026-01-01T00:20:01Z", now))
    assert.isFalse(eventsubFresh("yesterday", now))
  })
})
