/**
 * The redirect allowlist (RedirectAllowlist.ts), issue #19: the refusals that are the only thing
 * between an attacker's redirect_uri and a configured one (the URL parser would otherwise normalise
 * the attacker's spelling onto an allowed URL), and the edges of what is accepted.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeRedirectAllowlist } from "../../src/services/auth/RedirectAllowlist.ts"

const BASE = "https://client.example/"

describe("length: at most 2048 characters", () => {
  const at2048 = BASE + "a".repeat(2048 - BASE.length)
  const at2049 = BASE + "a".repeat(2049 - BASE.length)
  it("a configured URI of 2048 characters is kept and matched; one of 2049 is invalid", () => {
    assert.strictEqual(at2048.length, 2048)
    const a = makeRedirectAllowlist([at2048, at2049])
    assert.deepStrictEqual(a.invalid, [at2049])
    assert.strictEqual(a.match(at2048)?.href, at2048)
    assert.isUndefined(a.match(at2049))
  })
  it("a redirect_uri over 2048 characters is refused even when it parses to an allowed URL", () => {
    // The URL parser drops the default port: 2052 characters as written, an allowed URL once parsed.
    const a = makeRedirectAllowlist([at2048])
    const withPort = at2048.replace("client.example/", "client.example:443/")
    assert.strictEqual(withPort.length, 2052)
    assert.isUndefined(a.match(withPort))
    // 2048 characters with the port written out: accepted, and it is the allowed URL.
    const short = makeRedirectAllowlist([at2048.slice(0, -4)])
    assert.strictEqual(short.match(at2048.slice(0, -4).replace("client.example/", "client.example:443/"))?.href, at2048.slice(0, -4))
  })
})

describe("dot segments the parser would resolve onto an allowed path", () => {
  const a = makeRedirectAllowlist([BASE, `${BASE}?x=1`, `${BASE}cb`])
  it("the allowed URLs themselves are accepted", () => {
    assert.isDefined(a.match(BASE))
    assert.isDefined(a.match(`${BASE}?x=1`))
    assert.isDefined(a.match(`${BASE}cb`))
  })
  it.each([
    ["a trailing /..", `${BASE}callback/..`],
    ["a trailing /.", `${BASE}.`],
    ["a trailing /. after a path", `${BASE}cb/.`],
    ["/.. then a query", `${BASE}callback/..?x=1`],
    ["/. then a query", `${BASE}.?x=1`],
    ["/../ inside", `${BASE}evil/../cb`],
    ["/./ inside", `${BASE}./cb`],
    ["an encoded trailing /..", `${BASE}evil/%2e%2e`],
    ["an encoded /../ inside (upper case)", `${BASE}evil/%2E%2E/cb`],
    ["a half-encoded /./", `${BASE}%2e/cb`]
  ])("refuses %s (%s)", (_name, uri) => {
    assert.isUndefined(a.match(uri))
  })
  it("three dots are a name, not a dot segment", () => {
    const b = makeRedirectAllowlist([`${BASE}.../cb`, `${BASE}cb/...`])
    assert.deepStrictEqual(b.invalid, [])
    assert.isDefined(b.match(`${BASE}.../cb`))
    assert.isDefined(b.match(`${BASE}cb/...`))
    assert.isDefined(makeRedirectAllowlist([`${BASE}a.b/c..d`]).match(`${BASE}a.b/c..d`))
  })
})

describe("spellings the parser would turn into an allowed URL", () => {
  const a = makeRedirectAllowlist([`${BASE}a/b`, "http://127.0.0.1/a/b"])
  it.each([
    ["a backslash for a slash", `${BASE}a\\b`],
    ["a backslash for a slash (loopback)", "http://127.0.0.1:8080/a\\b"],
    ["a tab inside the path", `${BASE}a/\tb`],
    ["a newline inside the path", `${BASE}a/\nb`],
    ["a leading space", ` ${BASE}a/b`],
    ["a trailing space", `${BASE}a/b `],
    ["a leading control character", `\u0001${BASE}a/b`],
    ["a trailing control character", `${BASE}a/b\u0001`],
    ["a trailing DEL", `${BASE}a/b\u007f`],
    ["an empty fragment", `${BASE}a/b#`]
  ])("refuses %s", (_name, uri) => {
    assert.isDefined(a.match(`${BASE}a/b`))
    assert.isUndefined(a.match(uri))
  })
})

describe("the printable ASCII range is accepted, from ! to ~", () => {
  it("an allowed URI with ! and ~ in its path matches itself", () => {
    const uri = `${BASE}!cb~`
    const a = makeRedirectAllowlist([uri])
    assert.deepStrictEqual(a.invalid, [])
    assert.strictEqual(a.match(uri)?.href, uri)
  })
  it("one with a character above ~ (non-ASCII) is refused, as configured and as asked", () => {
    const a = makeRedirectAllowlist([`${BASE}caf\u00e9`, `${BASE}cafe`])
    assert.deepStrictEqual(a.invalid, [`${BASE}caf\u00e9`])
    assert.isUndefined(a.match(`${BASE}caf\u00e9`))
    assert.isUndefined(a.match(`${BASE}caf%C3%A9`), "its encoded form is another path")
  })
})

describe("user info the written authority does not show", () => {
  // Without `//`, the parser still reads an authority: "https:u@host" is https://u@host/, yet the
  // authority as written (after "https://", 8 characters in) starts past the `@`.
  const a = makeRedirectAllowlist([`${BASE}callback`, "http://127.0.0.1/cb"])
  it.each([
    ["https", "https:u@client.example/callback"],
    ["http loopback", "http:u@127.0.0.1:8080/cb"],
    ["a password", "https::p@client.example/callback"],
    ["an empty user", "https://@client.example/callback"]
  ])("refuses a user name (%s): %s", (_name, uri) => {
    assert.isDefined(a.match(`${BASE}callback`))
    assert.isUndefined(a.match(uri))
  })
  it("configured that way, it is invalid", () => {
    assert.deepStrictEqual(makeRedirectAllowlist(["https:u@client.example/callback"]).invalid, ["https:u@client.example/callback"])
  })
})
