/**
 * Shared setup of the FormsHttp*.test.ts files: the gateway in-process on a real database (PGlite,
 * and PostgreSQL when TEST_DATABASE_URL is set; each app its own schema), requests as a seeded user,
 * and the checks of a 400 envelope. Nothing here holds state between files: each file builds its own app.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { TASKBOARD_BOARDS } from "../../src/sandbox/sources/Seed.ts"
import type { DbKind } from "../utils/Db.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"

export const OPTIONS = ["Description", "Title", "List", "Label", "Attachment", "Private"]
export const REAL_BOARDS = TASKBOARD_BOARDS.filter((b) => !b.closed).map((b) => ({ id: b.id, name: b.name }))

export const formsPath = (server = S1_ID, bot = BOT1_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/forms`

/** A request as `userId` (null: unsigned); the body, if any, as JSON. */
export const call = (method: string, path: string, body?: unknown, userId: string | null = ALICE_ID) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method }
    if (userId !== null) init.token = yield* tokenOf(userId)
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    return { status: res.status, body: yield* json(res) }
  })

export const paths = (body: { errors: ReadonlyArray<{ additionalProperties?: { path?: string } }> }) =>
  body.errors.map((e) => e.additionalProperties?.path)

export const assertBadRequest = (r: { status: number; body: any }, expectedPaths: ReadonlyArray<string>, label: string) => {
  assert.strictEqual(r.status, 400, `${label}: ${JSON.stringify(r.body)}`)
  assert.deepStrictEqual(Object.keys(r.body), ["errors"])
  for (const e of r.body.errors) {
    assert.strictEqual(e.code, "Bad Request")
    assert.isString(e.message)
  }
  assert.sameMembers(paths(r.body), [...expectedPaths], `${label}: ${JSON.stringify(r.body)}`)
}

export const step = (text: string, extra: Record<string, unknown> = {}) => ({ type: "message", string: text, ...extra })

// Building the app (PGlite's WebAssembly, the migrations) took over 60 s at a load of 16 on 2 cores.
const app = (db: DbKind) => layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 120_000 })
export type FormsIt = Parameters<Parameters<ReturnType<typeof app>>[1]>[0]

/** One suite per database kind, each on an app (and a database) of its own, built once for the suite. */
export const formsOverHttp = (topic: string, tests: (it: FormsIt) => void) => {
  for (const db of dbKinds) app(db)(`forms over HTTP: ${topic} (${db})`, tests)
}
