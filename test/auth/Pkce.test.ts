/**
 * PKCE (Pkce.ts), issue #19: which code_verifier the token exchange accepts for a sign-in's
 * code_challenge. RFC 7636 §4.1: 43 to 128 characters of [A-Za-z0-9._~-]; §4.2: S256.
 */
import { assert, describe, it } from "@effect/vitest"
import { s256, verifierMatches } from "../../src/services/auth/Pkce.ts"

// RFC 7636 Appendix B.
const RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
const RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

/** A verifier of `length` characters built around `core`, so each case has exactly the characters it tests. */
const pad = (core: string, length: number) => core + "x".repeat(length - core.length)
/** Whether the client's `verifier` is accepted against the challenge of that very verifier. */
const accepted = (verifier: string) => verifierMatches(verifier, s256(verifier))

describe("s256", () => {
  it("is the RFC 7636 Appendix B challenge: BASE64URL(SHA-256(verifier)), no padding", () => {
    assert.strictEqual(s256(RFC_VERIFIER), RFC_CHALLENGE)
  })
})

describe("verifierMatches", () => {
  it("accepts the RFC's verifier for its challenge, and nothing else for it", () => {
    assert.isTrue(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE))
    assert.isFalse(verifierMatches(undefined, RFC_CHALLENGE))
    assert.isFalse(verifierMatches(RFC_VERIFIER.slice(0, -1) + "l", RFC_CHALLENGE), "another verifier")
    assert.isFalse(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE.slice(0, -1) + "N"), "another challenge of the same length")
  })

  it("a challenge of another length is a plain 'no' (not a crash of the comparison)", () => {
    assert.isFalse(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE.slice(1)))
    assert.isFalse(verifierMatches(RFC_VERIFIER, `${RFC_CHALLENGE}=`))
    assert.isFalse(verifierMatches(RFC_VERIFIER, ""))
  })

  it("length: 43 to 128 characters", () => {
    assert.isFalse(accepted("a".repeat(42)))
    assert.isTrue(accepted("a".repeat(43)))
    assert.isTrue(accepted("a".repeat(44)))
    assert.isTrue(accepted("a".repeat(127)))
    assert.isTrue(accepted("a".repeat(128)))
    assert.isFalse(accepted("a".repeat(129)))
    assert.isFalse(accepted(""))
  })

  it.each([
    "A", "Z", "a", "z", "0", "9", "M", "m", "5", ".", "_", "~", "-"
  ])("accepts the unreserved character %s", (c) => {
    assert.isTrue(accepted(pad(c.repeat(3), 43)))
    assert.isTrue(accepted(c.repeat(43)))
  })

  it.each([
    ["plus", "+"], ["slash", "/"], ["equals", "="], ["space", " "], ["percent", "%"], ["non-ASCII", "é"],
    ["NUL", "\u0000"], ["newline", "\n"], ["at", "@"], ["backtick", "`"], ["open bracket", "["], ["colon", ":"]
  ])("refuses a verifier with a %s, even when the challenge is its S256", (_name, c) => {
    assert.isFalse(accepted(pad(`a${c}`, 43)), "inside")
    assert.isFalse(accepted(pad(c, 44)), "first")
    assert.isFalse(accepted("a".repeat(43) + c), "last")
  })

  it("a well-formed verifier with anything before or after it is refused", () => {
    assert.isFalse(accepted(`!${"a".repeat(43)}`))
    assert.isFalse(accepted(`${"a".repeat(43)}!`))
    assert.isFalse(accepted(`${"a".repeat(43)}\n`))
    assert.isFalse(accepted(`${"a".repeat(200)}`))
  })
})
