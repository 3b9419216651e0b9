/** Raw calls to a running sandbox (`SandboxServer`), shared by the sandbox tests. */
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"

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
