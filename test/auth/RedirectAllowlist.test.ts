import { assert, describe, it } from "@effect/vitest"
import { makeRedirectAllowlist } from "../../src/services/RedirectAllowlist.ts"

const allowlist = makeRedirectAllowlist([
  "https://client.example/callback",
  "https://app.example/cb?flow=web",
  "http://127.0.0.1/cb",
  "http://[::1]/cb",
  "http://localhost/oauth/done"
])

describe("redirect allowlist", () => {
  it.each([
    "https://client.example/callback",
    "HTTPS://CLIENT.EXAMPLE/callback",
    "https://client.example:443/callback",
    "https://app.example/cb?flow=web",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:8080/cb",
    "http://127.0.0.1:53117/cb",
    "http://[::1]:9000/cb",
    "http://localhost:3000/oauth/done"
  ])("accepts %s", (uri) => {
    assert.isDefined(allowlist.match(uri))
  })

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["other host", "https://evil.example/callback"],
    ["userinfo trick", "https://client.example@evil.example/callback"],
    ["userinfo trick (http)", "http://good@evil/callback"],
    ["userinfo with password", "https://client.example:x@evil.example/callback"],
    ["suffix host", "https://client.example.evil.example/callback"],
    ["prefix host", "https://evilclient.example/callback"],
    ["subdomain", "https://sub.client.example/callback"],
    ["scheme change", "http://client.example/callback"],
    ["other scheme", "ftp://client.example/callback"],
    ["javascript:", "javascript:alert(1)//https://client.example/callback"],
    ["javascript: uppercase", "JavaScript:alert(document.cookie)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["encoded dots", "https://client.example/x/%2e%2e/callback"],
    ["encoded dots uppercase", "https://client.example/x/%2E%2E/callback"],
    ["dot segments", "https://client.example/x/../callback"],
    ["single dot segment", "https://client.example/./callback"],
    ["encoded slash", "https://client.example/callback%2f..%2fevil"],
    ["backslash", "https://client.example\\@evil.example/callback"],
    ["backslash in path", "https://evil.example\\client.example/callback"],
    ["fragment", "https://client.example/callback#x"],
    ["empty fragment", "https://client.example/callback#"],
    ["CRLF", "https://client.example/callback\r\nSet-Cookie: x=y"],
    ["encoded CRLF", "https://client.example/callback%0d%0aSet-Cookie:x"],
    ["space", "https://client.example/callback x"],
    ["tab", "https://client.example/call\tback"],
    ["trailing slash", "https://client.example/callback/"],
    ["other path", "https://client.example/callback2"],
    ["path prefix", "https://client.example/call"],
    ["added query", "https://client.example/callback?next=https://evil.example"],
    ["changed query", "https://app.example/cb?flow=evil"],
    ["port change on non-loopback", "https://client.example:8443/callback"],
    ["protocol-relative", "//client.example/callback"],
    ["relative", "/callback"],
    ["loopback over https", "https://127.0.0.1:8080/cb"],
    ["loopback other path", "http://127.0.0.1:8080/other"],
    ["loopback host not listed", "http://127.0.0.2:8080/cb"],
    ["loopback lookalike", "http://127.0.0.1.evil.example/cb"],
    ["localhost lookalike", "http://localhost.evil.example/oauth/done"],
    ["loopback userinfo", "http://127.0.0.1:80@evil.example/cb"],
    ["encoded at", "https://client.example%40evil.example/callback"]
  ])("rejects %s", (_name, uri) => {
    assert.isUndefined(allowlist.match(uri))
  })

  it("ignores invalid configured entries", () => {
    const a = makeRedirectAllowlist(["javascript:alert(1)", "https://ok.example/cb#frag", "not a url"])
    assert.strictEqual(a.invalid.length, 3)
    assert.isUndefined(a.match("javascript:alert(1)"))
  })

  it("an empty allowlist admits nothing, not even loopback", () => {
    assert.isUndefined(makeRedirectAllowlist([]).match("http://127.0.0.1:8080/cb"))
  })
})
