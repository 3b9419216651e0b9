/**
 * Shared setup of the FeedsHttp*.test.ts files: the gateway in-process on a real database (PGlite,
 * and PostgreSQL when TEST_DATABASE_URL is set; each app its own schema), requests as a seeded user,
 * requests straight to the sandbox, and the check of a 400 naming a path. Nothing here holds state
 * between files: each file builds its own app, and a file that keeps the bodies it was answered
 * passes its own array to `requester`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT2_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import type { DbKind } from "../utils/Db.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

export type FeedModule = "photo" | "forum" | "rss" | "streaming" | "microblog" | "video"

/** Requests as `userId`, the body as JSON; each raw answer is also pushed onto `seen` when given. */
export const requester = (seen?: Array<string>) => (method: string, path: string, body?: unknown, userId: string = ALICE_ID) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method, token: yield* tokenOf(userId) }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    const text = yield* Effect.promise(() => res.text())
    seen?.push(text)
    return { status: res.status, body: JSON.parse(text), text }
  })

export const call = requester()

export const modulePath = (m: string, server = S1_ID, bot = BOT2_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/${m}`

/** A request straight to the sandbox (not the gateway). */
export const sandbox = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return text === "" ? undefined : JSON.parse(text)
    })
  })
export const webhookCreations = Effect.map(sandbox("GET", "/sandbox/stats"), (s) => s.calls["POST /channels/{id}/webhooks"] ?? 0)

export const assertBad = (r: { status: number; body: any }, path: string, label: string) => {
  assert.strictEqual(r.status, 400, `${label}: ${JSON.stringify(r.body)}`)
  assert.strictEqual(r.body.errors[0].code, "Bad Request")
  const paths = r.body.errors.map((e: { additionalProperties?: { path?: string } }) => e.additionalProperties?.path)
  assert.include(paths, path, `${label}: ${JSON.stringify(r.body)}`)
}

// Building the app (PGlite's WebAssembly, the migrations) took over 60 s at a load of 16 on 2 cores
// (FormsHttpFixtures.ts); three files now build one each.
const app = (db: DbKind) => layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 120_000 })
export type FeedsIt = Parameters<Parameters<ReturnType<typeof app>>[1]>[0]

/** One suite per database kind, each on an app (and a database) of its own, built once for the suite. */
export const feedsOverHttp = (topic: string, tests: (it: FeedsIt) => void) => {
  for (const db of dbKinds) app(db)(`feeds over HTTP: ${topic} (${db})`, tests)
}
