/**
 * A browser that opens the login on `localhost` while PUBLIC_URL says 127.0.0.1 is sent to PUBLIC_URL
 * first, so the sign-in cookie lands where the callback arrives; a login that would be refused is
 * refused there (400 naming every problem), never redirected.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { CLIENT_REDIRECT, TestApp, UA } from "../utils/TestApp.ts"

const get = (url: string, host: string) =>
  Effect.promise(() =>
    new Promise<{ status: number; location: string | undefined; cookie: string | undefined; body: string }>((resolve, reject) => {
      const req = request(url, { headers: { host, "user-agent": UA } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            location: res.headers.location,
            cookie: res.headers["set-cookie"]?.[0],
            body: Buffer.concat(chunks).toString("utf8")
          }))
      })
      req.on("error", reject)
      req.end()
    })
  )

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("sign-in host", (it) => {
  it.effect("login on another loopback name redirects to PUBLIC_URL without setting a cookie", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const path = `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}&state=s1`
      const port = new URL(app.url).port
      const other = yield* get(app.url + path, `localhost:${port}`)
      assert.strictEqual(other.status, 307)
      assert.strictEqual(other.location, app.url + path)
      assert.isUndefined(other.cookie)
      const same = yield* get(app.url + path, `127.0.0.1:${port}`)
      assert.strictEqual(same.status, 307)
      assert.include(same.location!, "/sandbox/discord/oauth2/authorize")
      assert.isDefined(same.cookie)
      // Not a loopback name: no redirect (a proxy could loop), the sign-in proceeds.
      const proxied = yield* get(app.url + path, "gateway.example.com")
      assert.include(proxied.location!, "/sandbox/discord/oauth2/authorize")
    }))

  it.effect("on another loopback name, a login that would be refused is a 400 there naming every problem, not a redirect", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const port = new URL(app.url).port
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["", ["redirect_uri"]],
        [`?redirect_uri=${encodeURIComponent("https://evil.example/callback")}&state=s1`, ["redirect_uri"]],
        [`?state=${"s".repeat(513)}&code_challenge_method=plain`, ["redirect_uri", "state", "code_challenge_method", "code_challenge"]],
        [`?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}&code_challenge=short&code_challenge_method=S256`, ["code_challenge"]]
      ]
      for (const [query, paths] of cases) {
        for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
          const res = yield* get(`${app.url}/auth/idp/login${query}`, host)
          assert.strictEqual(res.status, 400, `${host} ${query}: ${res.body}`)
          assert.isUndefined(res.location)
          assert.isUndefined(res.cookie)
          const body = JSON.parse(res.body) as { errors: ReadonlyArray<{ additionalProperties?: { path?: string; in?: string } }> }
          assert.deepStrictEqual(body.errors.map((e) => e.additionalProperties?.path), [...paths], `${host} ${query}`)
          assert.deepStrictEqual(body.errors.map((e) => e.additionalProperties?.in), paths.map(() => "query"))
        }
      }
    }))
})
