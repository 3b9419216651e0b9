/**
 * The whole sandbox on a loopback port for the task-board tests, with the twin's rate limit shrunk
 * (`limits`) so a window passes in a test; `trelloCall` sends a request as a Trello client would
 * (credentials in the query unless told otherwise) and gives back status, headers and body.
 */
import { Context, Effect, Layer } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { TaskBoardTwinConfig, type TaskBoardTwinLimits } from "../../src/sandbox/taskboard/State.ts"

export const ROADMAP = "5f1a0000000000000000b001"
export const APPLICATIONS = "5f1a0000000000000000b002"
export const TODO_LIST = "5f1a0000000000000000c001"
export const BUG_LABEL = "5f1a0000000000000000d001"
export const URGENT_LABEL = "5f1a0000000000000000d101"

export class TwinUrl extends Context.Service<TwinUrl, string>()("test/TwinUrl") {}

export const twinLayer = (limits: Partial<TaskBoardTwinLimits> = {}) =>
  Layer.effect(TwinUrl, Effect.map(SandboxServer, (s) => s.url)).pipe(
    Layer.provideMerge(SandboxServer.layer()),
    Layer.provide(Layer.succeed(TaskBoardTwinConfig, { tokenLimit: 100, keyLimit: 300, intervalMs: 10_000, ...limits }))
  )

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export const httpCall = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const url = yield* TwinUrl
    return yield* Effect.promise(async (): Promise<Answer> => {
      const res = await fetch(`${url}${path}`, body === undefined ? { method, headers } : {
        method,
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body)
      })
      const text = await res.text()
      let json: unknown = undefined
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: res.status, headers: res.headers, text, json }
    })
  })

/** A Trello API call under /sandbox/taskboard with `key`/`token` in the query. */
export const trelloCall = (method: string, path: string, body?: unknown, token = "tok-1") => {
  const sep = path.includes("?") ? "&" : "?"
  return httpCall(method, `/sandbox/taskboard${path}${sep}key=key-1&token=${token}`, body)
}
