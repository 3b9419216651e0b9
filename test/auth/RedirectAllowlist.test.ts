import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"
import { makeRedirectAllowlist } from "../../src/services/auth/RedirectAllowlist.ts"

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

  describe("hosts written as hex, octal or a single number (parsed to a loopback address, never matched)", () => {
    it.each([
      "http://0x7f000001/cb",
      "http://0x7f000001:8080/cb",
      "http://2130706433:8080/cb",
      "http://0177.0.0.1:8080/cb",
      "http://0177.0000.0000.0001/cb",
      "http://127.1:8080/cb",
      "http://127.0.1/cb",
      "http://0x7f.0.0.1/cb",
      "http://0x7f000001:80/cb",
      "https://0x7f000001/cb",
      "http://[0:0:0:0:0:0:0:1]:8080/cb",
      "http://[::ffff:127.0.0.1]:8080/cb",
      "http://[::127.0.0.1]/cb"
    ])("rejects %s", (uri) => {
      assert.isUndefined(allowlist.match(uri))
    })
  })

  describe("an explicit default port", () => {
    it("is the same URL on the request side (443 for https, 80 for http loopback)", () => {
      assert.strictEqual(allowlist.match("https://client.example:443/callback")?.href, "https://client.example/callback")
      assert.strictEqual(allowlist.match("http://127.0.0.1:80/cb")?.href, "http://127.0.0.1/cb")
      assert.isUndefined(allowlist.match("https://client.example:80/callback"), "80 is not https' default")
      assert.isUndefined(allowlist.match("https://client.example:0443/callback"), "not as written")
    })
    it("and on the configured side", () => {
      const a = makeRedirectAllowlist(["https://app.example:443/cb", "http://plain.example:80/cb"])
      assert.deepStrictEqual(a.invalid, [])
      assert.isDefined(a.match("https://app.example/cb"))
      assert.isDefined(a.match("https://app.example:443/cb"))
      assert.isDefined(a.match("http://plain.example/cb"))
      assert.isUndefined(a.match("https://app.example:8443/cb"))
    })
  })

  describe("an https loopback entry", () => {
    const a = makeRedirectAllowlist(["https://127.0.0.1:8443/cb", "https://localhost/cb"])
    it("matches its own port only, never any port (RFC 8252 §7.3 covers http loopback alone)", () => {
      assert.isDefined(a.match("https://127.0.0.1:8443/cb"))
      assert.isUndefined(a.match("https://127.0.0.1:9443/cb"))
      assert.isUndefined(a.match("https://127.0.0.1/cb"))
      assert.isDefined(a.match("https://localhost/cb"))
      assert.isDefined(a.match("https://localhost:443/cb"))
      assert.isUndefined(a.match("https://localhost:8443/cb"))
      assert.isUndefined(a.match("http://127.0.0.1:8443/cb"), "nor the http loopback")
      assert.isUndefined(a.match("http://localhost:5000/cb"))
    })
  })

  it.each([
    "https://client.example/callback/..",
    "https://client.example/callback/.",
    "https://client.example/callback/..?x=1",
    "https://client.example/callback/../",
    "https://client.example/callback/%2E%2E",
    "https://client.example/callback/.%2e",
    "http://127.0.0.1:8080/cb/.."
  ])("rejects a trailing dot segment: %s", (uri) => {
    assert.isUndefined(allowlist.match(uri))
  })

  it("lists configured entries that are not http(s) URLs (the configuration refuses them: test below)", () => {
    const a = makeRedirectAllowlist(["ftp://files.example/cb", "custom-app:/oauth", "https://ok.example/cb", "file:///tmp/cb", "ws://x.example/cb"])
    assert.deepStrictEqual(a.invalid, ["ftp://files.example/cb", "custom-app:/oauth", "file:///tmp/cb", "ws://x.example/cb"])
    assert.isDefined(a.match("https://ok.example/cb"))
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

describe("ALLOWED_REDIRECT_URIS at start", () => {
  const load = (env: Record<string, string>) =>
    loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ...env } }))), Effect.flip)

  it.effect("an entry that is not http(s) is refused, naming the variable and the entry", () =>
    Effect.gen(function*() {
      const error = yield* load({ ALLOWED_REDIRECT_URIS: "https://ok.example/cb,ftp://files.example/cb" })
      assert.strictEqual(error._tag, "ConfigInvalid")
      assert.match(error.message, /^ALLOWED_REDIRECT_URIS: /)
      assert.include(error.message, "\"ftp://files.example/cb\"")
      assert.notInclude(error.message, "ok.example")
    }))

  it.effect("so is one the allowlist could never match (a fragment, user info, a dot segment)", () =>
    Effect.gen(function*() {
      for (const entry of ["https://ok.example/cb#x", "https://u@ok.example/cb", "https://ok.example/a/../cb", "not a url"]) {
        const error = yield* load({ ALLOWED_REDIRECT_URIS: entry })
        assert.match(error.message, /^ALLOWED_REDIRECT_URIS: /, entry)
      }
    }))

  it.effect("valid entries start", () =>
    Effect.gen(function*() {
      const config = yield* loadConfig.pipe(
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ALLOWED_REDIRECT_URIS: "https://ok.example/cb,http://127.0.0.1/cb" } })))
      )
      assert.deepStrictEqual(config.allowedRedirectUris, ["https://ok.example/cb", "http://127.0.0.1/cb"])
    }))
})
