/** Raw calls to a running sandbox (`SandboxServer`), shared by the sandbox tests. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import type { Handler, Receiver } from "./InteractionReceiver.ts"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

export const call = (path: string, init?: RequestInit) =>
  Effect.gen(function*() {
    const server = yield* SandboxServer
    return yield* Effect.promise(async (): Promise<Answer> => {
      const response = await fetch(`${server.url}${path}`, { redirect: "manual", ...init })
      const text = await response.text()
      const isJson = response.headers.get("content-type")?.includes("json") ?? false
      return { status: response.status, headers: response.headers, body: isJson && text !== "" ? JSON.parse(text) : text }
    })
  })

export const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined

/** A JSON request to the sandbox. */
export const json = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(path, { method, headers: { "content-type": "application/json", ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })

export const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

/** `at(x, "data", "components", 0)`: a value deep in an answer. */
export const at = (value: unknown, ...keys: ReadonlyArray<string | number>): unknown =>
  keys.reduce<unknown>((v, k) => (typeof k === "number" ? list(v)[k] : field(v, k)), value)

/** Sets the bot's answers on `receiver` (after loading the public keys `GET /sandbox` lists). */
export const armer = (receiver: Receiver) => (handler: Handler) =>
  Effect.gen(function*() {
    const index = yield* call("/sandbox")
    for (const b of list(field(index.body, "bots"))) receiver.keys.set(String(field(b, "id")), String(field(b, "public_key")))
    receiver.handler = handler
  })

/**
 * The 429 of a fixed window that the first call opened, judged to the millisecond against the clock
 * read around each call (`reads[i]`: before and after call i): `retry_after` and `reset-after` within
 * the window, `retry-after` its whole seconds, `reset` one window after the first call, and `reset` −
 * `reset-after` the moment of the 429 (call `limitedAt`). Answers its `retry_after` (seconds).
 */
export const assertWindow429 = (
  limited: Answer,
  reads: ReadonlyArray<readonly [number, number]>,
  limitedAt: number,
  windowMs: number
) => {
  assert.strictEqual(field(limited.body, "global"), false)
  const retryAfter = Number(field(limited.body, "retry_after"))
  assert.isTrue(retryAfter > 0 && retryAfter <= windowMs / 1000, String(retryAfter))
  assert.strictEqual(limited.headers.get("retry-after"), String(Math.ceil(retryAfter)))
  const resetAfter = Number(limited.headers.get("x-ratelimit-reset-after"))
  assert.isTrue(resetAfter > 0 && resetAfter <= windowMs / 1000, String(resetAfter))
  const resetMs = Math.round(Number(limited.headers.get("x-ratelimit-reset")) * 1000)
  const resetAfterMs = Math.round(resetAfter * 1000)
  assert.isAtLeast(resetMs, reads[0]![0] + windowMs, "the window started at the first call")
  assert.isAtMost(resetMs, reads[0]![1] + windowMs, "the window started at the first call")
  assert.isAtLeast(resetMs - resetAfterMs, reads[limitedAt]![0], "reset-after counts from the 429")
  assert.isAtMost(resetMs - resetAfterMs, reads[limitedAt]![1], "reset-after counts from the 429")
  return { retryAfter }
}
