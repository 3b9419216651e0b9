/**
 * The forms runtime in an API-only process (ROLE=api): it sends the submission's jobs but runs none,
 * and a queue cannot be declared inside the transaction that stores the submission, so every queue
 * of the runtime is declared when the engine starts, in every role.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BOB_ID } from "../../src/sandbox/seed/Ids.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { TestApp } from "../utils/TestApp.ts"
import { createForm } from "./FlowHelpers.ts"
import { fill, twoSteps, waitForKeys } from "./PlayerFixtures.ts"

layer(TestApp.layer({ capabilities: { db: "pglite" }, config: { role: "api" } }), { excludeTestServices: true })("forms in ROLE=api", (it) => {
  it.effect("a member's last page is stored with its review message queued, for a worker to post", () =>
    Effect.gen(function*() {
      yield* waitForKeys
      const formId = yield* createForm({ title: "API only", steps: twoSteps })
      const id = yield* fill(BOB_ID, formId)
      const stored = yield* (yield* SubmissionsRepo).get(id)
      assert.deepStrictEqual(stored?.effects.map((e) => [e.kind, e.state]), [["review_message", "pending"]])
      const sql = yield* SqlClient.SqlClient
      const queued = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'submission-review'`
      assert.strictEqual(queued[0]!.n, 1)
    }))
})
