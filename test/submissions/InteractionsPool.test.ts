/**
 * The interactions' own pipelined pool (layers/infra/InteractionsSql.ts): on PostgreSQL a member's
 * pages run on it, with a lock wait bounded at 2 s (the member is told to try again, nothing is
 * written, the draft is kept) while the main pool goes on serving; on the embedded database there is
 * none and the pages run on the main client.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { DEADLINE_MS } from "../../src/http/submissions/InteractionsRoute.ts"
import { InteractionsSql, interactionsSql } from "../../src/layers/infra/InteractionsSql.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, createForm, member } from "./FlowHelpers.ts"
import { inputsOf, waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { eventuallyEffect, twoSteps } from "./PlayerFixtures.ts"

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`the interactions' SQL client, on ${kind}`, (it) => {
    if (kind === "pglite") {
      it.effect("the embedded database has no pool of the interactions': they use the main client", () =>
        Effect.gen(function*() {
          assert.isUndefined(yield* InteractionsSql)
          assert.strictEqual(yield* interactionsSql, yield* SqlClient.SqlClient)
        }))
      return
    }

    it.effect("a pool of its own, its lock waits bounded at 1.5 s and its statements at 1.9 s; the main pool's are not", () =>
      Effect.gen(function*() {
        const own = yield* InteractionsSql
        const main = yield* SqlClient.SqlClient
        assert.isDefined(own)
        assert.notStrictEqual(own, main)
        const settings = (sql: SqlClient.SqlClient) =>
          sql<{ lock_timeout: string; statement_timeout: string }>`SELECT current_setting('lock_timeout') AS lock_timeout,
            current_setting('statement_timeout') AS statement_timeout`
        assert.deepStrictEqual(yield* settings(own!), [{ lock_timeout: "1500ms", statement_timeout: "1900ms" }])
        assert.deepStrictEqual(yield* settings(main), [{ lock_timeout: "0", statement_timeout: "0" }])
      }))

    it.effect("a last page whose draft another transaction holds: 'try again' within the platform's 3 s, nothing written, the main pool serving meanwhile; then it goes through", () =>
      Effect.gen(function*() {
        yield* waitForKeys(signer)
        const formId = yield* createForm({ title: "Held draft", steps: twoSteps })
        const m = member(signer, bob)
        const modal = yield* m.pick(formId)
        const [name, team] = inputsOf(modal).map((i) => i.input.custom_id!)
        const main = yield* SqlClient.SqlClient
        const own = (yield* InteractionsSql)!
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // Another transaction holds the draft's row (an operator's statement, say) until released.
        const holder = yield* Effect.forkChild(main.withTransaction(Effect.gen(function*() {
          yield* main`SELECT id FROM form_drafts WHERE workflow_id = ${formId} AND user_id = ${bob.userId} FOR UPDATE`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(locked)
        const started = Date.now()
        const page = yield* Effect.forkChild(m.submit(modal, { [name!]: "bob", [team!]: ["0"] }))
        // The member's statement waits on the lock, on a connection of the interactions' pool (the tests
        // name it after their schema, test/utils/Db.ts)…
        const [{ schema }] = (yield* main<{ schema: string }>`SELECT current_schema() AS schema`) as [{ schema: string }]
        const waiting = main<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = ${`${schema}-interactions`} AND wait_event_type = 'Lock' AND query LIKE 'WITH submission AS%'`
        yield* eventuallyEffect(Effect.map(waiting, ([r]) => (r!.n >= 1 ? true : undefined)))
        // …and meanwhile the main pool answers.
        const [probe] = yield* main<{ one: number }>`SELECT 1 AS one`
        assert.strictEqual(probe!.one, 1)
        const answer = yield* Fiber.join(page)
        const elapsed = Date.now() - started
        assert.isBelow(elapsed, 3000, "answered within the platform's 3 s")
        if (answer.data?.content === "The gateway is busy; try again in a moment.") {
          // A loaded machine: the statement began its wait so late that the answer's own deadline came
          // first (the member is still told to try again). Only once that deadline has passed.
          assert.isAtLeast(elapsed, DEADLINE_MS, "'busy' only past the answer's deadline")
        } else {
          assert.strictEqual(answer.data?.content, "Something went wrong on our side; try again in a moment.")
          // Nothing waits any more: the statement failed at its lock time-out, before the answer.
          assert.deepStrictEqual(yield* waiting, [{ n: 0 }])
        }
        // Whichever came first, the wait ends while the row is still held: the statement was cancelled
        // by its time-out (it never waits for the lock's release, nor commits after the answer)…
        yield* eventuallyEffect(Effect.map(waiting, ([r]) => (r!.n === 0 ? true : undefined)))
        // …and the interactions' pool serves again, the row still held.
        const [free] = yield* own<{ one: number }>`SELECT 1 AS one`.pipe(Effect.timeout("5 seconds"))
        assert.strictEqual(free!.one, 1)
        const count = main<{ submissions: number; drafts: number }>`SELECT
          (SELECT count(*)::int FROM form_submissions WHERE workflow_id = ${formId}) AS submissions,
          (SELECT count(*)::int FROM form_drafts WHERE workflow_id = ${formId} AND user_id = ${bob.userId}) AS drafts`
        assert.deepStrictEqual(yield* count, [{ submissions: 0, drafts: 1 }])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        // The draft was kept: the same page, sent again, is stored.
        const again = yield* m.submit(modal, { [name!]: "bob", [team!]: ["0"] })
        assert.include(again.data?.content, "Submitted")
        assert.deepStrictEqual(yield* count, [{ submissions: 1, drafts: 0 }])
      }))
  })
}
