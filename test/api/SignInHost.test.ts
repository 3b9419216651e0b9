/** A browser that opens the login on `localhost` while PUBLIC_URL says 127.0.0.1 is sent to PUBLIC_URL first, so the sign-in cookie lands where the callback arrives. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { CLIENT_REDIRECT, TestApp, UA } from "../utils/TestApp.ts"

const get = (url: string, host: string) =>
  Effect.promise(() =>
    new Promise<{ status: number; location: string | undefined; cookie: string | undefined }>((resolve, reject) => {
      const req = request(url, { headers: { host, "user-agent": UA } }, (res) => {
        res.resume()
        resolve({ status: res.statusCode!, location: res.headers.location, cookie: res.headers["set-cookie"]?.[0] })
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
})
