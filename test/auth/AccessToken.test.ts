/**
 * The one token parser (domain/auth/AccessToken.ts), issue #19: the header forms its mutation run found
 * unpinned. Table-driven: the header value as a client sends it → the token the gateway looks up
 * (undefined: none, the request is anonymous and gets the 401 envelope).
 */
import { assert, describe, it } from "@effect/vitest"
import { accessTokenFrom, accessTokensFrom, MAX_TOKEN_LENGTH, parseToken } from "../../src/domain/auth/AccessToken.ts"

const token = "bmg_at_Abc-123_xyz"

describe("parseToken: what a header value yields", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined, string | undefined]> = [
    ["surrounding spaces are trimmed", `  ${token}  `, token],
    ["surrounding spaces around the Bearer form too", `  Bearer   ${token} `, token],
    ["the scheme alone is no token", "Bearer", undefined],
    ["the scheme alone, any case, spaces around", "  bEaReR  ", undefined],
    ["a token that begins with the letters bearer is a token", "bearerish-token", "bearerish-token"],
    ["a token that ends with the letters bearer is a token", "tok_bearer", "tok_bearer"],
    ["a token that is bearer then more is a token", "BearerToken123", "BearerToken123"],
    ["another scheme is no token", `Basic ${token}`, undefined],
    ["a control character before the token", `\u0001${token}`, undefined],
    ["a control character after the token", `${token}\u0001`, undefined],
    ["a non-ASCII character before the token", `é${token}`, undefined],
    ["a non-ASCII character after the token", `${token}é`, undefined],
    ["an empty value", "", undefined],
    ["spaces only", "   ", undefined],
    ["Bearer and spaces only", "Bearer    ", undefined]
  ]
  for (const [name, value, expected] of cases) {
    it(name, () => {
      assert.strictEqual(parseToken(value), expected)
    })
  }

  it("the 512-character limit at 511, 512 and 513, bare and as Bearer", () => {
    for (const [length, expected] of [[511, true], [512, true], [513, false]] as const) {
      const t = "a".repeat(length)
      assert.strictEqual(parseToken(t), expected ? t : undefined, `bare ${length}`)
      assert.strictEqual(parseToken(`Bearer ${t}`), expected ? t : undefined, `Bearer ${length}`)
    }
    assert.strictEqual(MAX_TOKEN_LENGTH, 512)
  })
})

describe("accessTokensFrom / accessTokenFrom: the tokens a request presents", () => {
  it("the same token in both headers is one candidate, looked up once", () => {
    assert.deepStrictEqual(accessTokensFrom({ authorization: `Bearer ${token}`, "x-access-token": token }), [token])
  })

  it("two different tokens: Authorization's first, then X-Access-Token's", () => {
    assert.deepStrictEqual(accessTokensFrom({ authorization: "Bearer other", "x-access-token": token }), ["other", token])
    assert.deepStrictEqual(accessTokensFrom({ authorization: "Basic dXNlcjpwYXNz", "x-access-token": `Bearer ${token}` }), [token])
    assert.deepStrictEqual(accessTokensFrom({}), [])
  })

  it("the first presented token", () => {
    assert.strictEqual(accessTokenFrom({ authorization: `Bearer ${token}` }), token)
    assert.strictEqual(accessTokenFrom({ "x-access-token": token }), token)
    assert.strictEqual(accessTokenFrom({ authorization: "Bearer first", "x-access-token": token }), "first")
    assert.strictEqual(accessTokenFrom({ authorization: "garbage with spaces" }), undefined)
  })
})
