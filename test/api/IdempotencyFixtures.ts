/** Requests with an Idempotency-Key and the counts of what they stored (IdempotencyHttp, IdempotencyReset, IdempotencyInstances). */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { raw, tokenOf } from "../utils/TestApp.ts"
import { step } from "./FormsHttpFixtures.ts"

export const form = (title: string) => ({ title, steps: [step("Your name?")] })

/** A request as Alice (or `userId`) with the key given (none: undefined); the answer's status, headers and text. */
export const send = (method: string, path: string, key: string | undefined, body?: unknown, userId = ALICE_ID) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = {}
    if (key !== undefined) headers["idempotency-key"] = key
    if (body !== undefined) headers["content-type"] = "application/json"
    const init = { method, headers, token: yield* tokenOf(userId), ...(body === undefined ? {} : { body: JSON.stringify(body) }) }
    const res = yield* raw(init, path)
    const text = yield* Effect.promise(() => res.text())
    return { status: res.status, replayed: res.headers.get("idempotent-replayed"), type: res.headers.get("content-type"), text }
  })

/** Forms titled `title` and their creation audit entries, as stored. */
export const countsOf = (title: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const forms = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM forms WHERE title = ${title}`
    const audits = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_entries
      WHERE event_type = 'PUSH' AND module_name = 'forms' AND event_string LIKE ${`Created form "${title}"%`}`
    return { forms: forms[0]!.n, audits: audits[0]!.n }
  })

