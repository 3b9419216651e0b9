/**
 * A landing page for sign-ins started from a browser in sandbox mode: shows the temporary token
 * (`code`) and how to exchange it. The default redirect URI in sandbox mode points here.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

export const SandboxCallbackRoute = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/sandbox/callback", (request) =>
    Effect.sync(() => {
      const url = new URL(request.url, "http://sandbox")
      const code = url.searchParams.get("code")
      const error = url.searchParams.get("error")
      const body = code !== null
        ? `<h1>Signed in</h1><p>Temporary token (valid for 60 s, one use):</p><pre>${escape(code)}</pre>
<p>Exchange it within a minute:</p><pre>curl -s -X POST -A demo -H 'Authorization: ${escape(code)}' "$GATEWAY/auth/idp/token"</pre>`
        : `<h1>Sign-in did not complete</h1><p>${escape(error ?? "no code")}</p>`
      return HttpServerResponse.html(`<!doctype html><meta charset="utf-8"><title>Sandbox sign-in</title>${body}`).pipe(
        HttpServerResponse.setHeaders({ "referrer-policy": "no-referrer", "cache-control": "no-store" })
      )
    }))
}))
