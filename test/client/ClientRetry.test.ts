/**
 * The typed client's safe retries (src/http/contract/ClientRetry.ts, issue #30): a fresh Idempotency-Key per
 * write under /api/, sent again with that same key after a connection reset or a 503 (Retry-After
 * honoured, attempts bounded); GETs carry no key. Against a scripted server that records what it
 * received; the round trip through the gateway itself is in test/api/IdempotencyClient.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { BotId, FormId, ServerId } from "../../src/domain/infra/Ids.ts"
import { isRetryable, retryAfterMs, withIdempotencyKey } from "../../src/http/contract/ClientRetry.ts"
import { makeClient } from "../../src/http/client.ts"

type Step = (req: IncomingMessage, res: ServerResponse) => void

const ok: Step = (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ success: true }))
const unavailable = (retryAfter: string): Step => (_req, res) =>
  res.writeHead(503, { "content-type": "application/json", "retry-after": retryAfter })
    .end(JSON.stringify({ errors: [{ code: "Service Unavailable", message: "down", additionalProperties: { retry_after: 0 } }] }))
const reset: Step = (req) => req.socket.destroy()

/** A server that answers its n-th request with `steps[n]` (the last one after that); the headers it received. */
const scripted = (steps: ReadonlyArray<Step>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; seen: Array<IncomingMessage["headers"] & { method: string | undefined }> }>((resolve) => {
        const seen: Array<IncomingMessage["headers"] & { method: string | undefined }> = []
        const server = createServer((req, res) => {
          seen.push({ ...req.headers, method: req.method })
          req.resume()
          req.on("end", () => steps[Math.min(seen.length - 1, steps.length - 1)]!(req, res))
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          Object.assign(seen, { close: () => server.close() })
          resolve({ url: `http://127.0.0.1:${port}`, seen })
        })
      })
    ),
    ({ seen }) => Effect.sync(() => (seen as unknown as { close: () => void }).close())
  )

const params = { appClientId: BotId.make("100000000000000001"), serverId: ServerId.make("200000000000000001"), formId: FormId.make(7) }
const clientOf = (url: string, retry = { baseDelayMs: 10 }) => makeClient({ baseUrl: url, accessToken: "t", userAgent: "retry-test/1.0", retry })

describe("ClientRetry", () => {
  it("Retry-After: seconds or an HTTP date; anything else is none", () => {
    assert.strictEqual(retryAfterMs("3"), 3000)
    assert.strictEqual(retryAfterMs(" 0 "), 0)
    assert.strictEqual(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000)
    assert.strictEqual(retryAfterMs(new Date(1_000).toUTCString(), 4_000), 0)
    for (const none of [undefined, "", "soon", "-1"]) assert.isUndefined(retryAfterMs(none))
  })

  it("a key for writes under /api/ only; a caller's own key is kept", () => {
    const keyOf = (r: HttpClientRequest.HttpClientRequest) => withIdempotencyKey(r).headers["idempotency-key"]
    const a = keyOf(HttpClientRequest.post("http://h/api/v1/x"))
    const b = keyOf(HttpClientRequest.post("http://h/api/v1/x"))
    assert.match(a!, /^[0-9a-f-]{36}$/)
    assert.notStrictEqual(a, b)
    assert.isDefined(keyOf(HttpClientRequest.patch("/api/v1/x")))
    assert.isDefined(keyOf(HttpClientRequest.delete("/api/v1/x")))
    assert.isUndefined(keyOf(HttpClientRequest.get("/api/v1/x")))
    assert.isUndefined(keyOf(HttpClientRequest.post("/auth/idp/token")))
    assert.strictEqual(keyOf(HttpClientRequest.setHeader(HttpClientRequest.post("/api/v1/x"), "idempotency-key", "mine")), "mine")
    assert.isTrue(isRetryable(HttpClientRequest.get("/auth/idp/login")))
    assert.isFalse(isRetryable(HttpClientRequest.post("http://h/auth/idp/token")))
  })

  it.live("a 503 then an answer: sent twice with one key, after Retry-After", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scripted([unavailable("1"), ok])
      const client = yield* clientOf(server.url)
      const started = Date.now()
      assert.deepStrictEqual(yield* client.forms.delete({ params }), { success: true })
      assert.isAtLeast(Date.now() - started, 950, "waited as Retry-After said")
      assert.strictEqual(server.seen.length, 2)
      assert.strictEqual(server.seen[0]!.method, "DELETE")
      assert.isString(server.seen[0]!["idempotency-key"])
      assert.strictEqual(server.seen[1]!["idempotency-key"], server.seen[0]!["idempotency-key"])
    })))

  it.live("a connection reset then an answer: sent again with the same key", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scripted([reset, ok])
      const client = yield* clientOf(server.url)
      assert.deepStrictEqual(yield* client.forms.delete({ params }), { success: true })
      assert.strictEqual(server.seen.length, 2)
      assert.strictEqual(server.seen[1]!["idempotency-key"], server.seen[0]!["idempotency-key"])
    })))

  it.live("bounded: three attempts in all, then the 503 is the caller's; each call its own key", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scripted([unavailable("0")])
      const client = yield* clientOf(server.url)
      const failed = yield* Effect.flip(client.forms.delete({ params }))
      assert.strictEqual(failed._tag, "ServiceUnavailable")
      assert.strictEqual(server.seen.length, 3)
      assert.strictEqual(new Set(server.seen.map((h) => h["idempotency-key"])).size, 1)
      yield* Effect.flip(client.forms.delete({ params }))
      assert.strictEqual(new Set(server.seen.map((h) => h["idempotency-key"])).size, 2)
    })))

  it.live("a Retry-After longer than the client waits: answered at once, not retried", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scripted([unavailable("120"), ok])
      const client = yield* clientOf(server.url, { baseDelayMs: 10 })
      const failed = yield* Effect.flip(client.forms.delete({ params }))
      assert.strictEqual(failed._tag, "ServiceUnavailable")
      assert.strictEqual(server.seen.length, 1)
    })))

  it.live("a GET carries no key (and is retried after a reset)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* scripted([reset, (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ forms: [] }))])
      const client = yield* clientOf(server.url)
      assert.deepStrictEqual(yield* client.forms.list({ params: { appClientId: params.appClientId, serverId: params.serverId } }), { forms: [] })
      assert.strictEqual(server.seen.length, 2)
      assert.isUndefined(server.seen[0]!["idempotency-key"])
    })))
})
