/**
 * A draft expires FORM_DRAFT_TTL_MINUTES (30 by default) after its last page (forms-runtime.md §3):
 * the expiry stored in `form_drafts` after a start and after a saved page, with the default and with
 * a configured value; and the variable is what sets it.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { createForm, member } from "./FlowHelpers.ts"
import type { Answer } from "./InteractionClient.ts"
import { buttonsOf, inputsOf, waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"

/** Two pages: five short questions, then one more. */
const twoPages = [1, 2, 3, 4, 5, 6].map((n) => ({ type: "message", string: `Question ${n}?`, char_limit: [1, 50] }))
const fill = (modal: Answer) => Object.fromEntries(inputsOf(modal).map((i) => [i.input.custom_id!, "an answer"]))

/** The member's draft of the form as stored. */
const draftOf = (formId: number, userId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ page: number; expires_at: Date }>`
      SELECT page, expires_at FROM form_drafts WHERE workflow_id = ${formId} AND user_id = ${userId}`
    assert.strictEqual(rows.length, 1)
    return rows[0]!
  })

/** `action`'s stored expiry is `minutes` after the moment it ran (within a second either side). */
const expiresAfter = <A, E, R>(minutes: number, action: Effect.Effect<A, E, R>, read: Effect.Effect<{ expires_at: Date }, any, any>) =>
  Effect.gen(function*() {
    const before = Date.now()
    const a = yield* action
    const after = Date.now()
    const { expires_at } = yield* read
    const at = expires_at.getTime()
    assert.isAtLeast(at, before + minutes * 60_000 - 1_000, `expires ${new Date(at).toISOString()}, started ${new Date(before).toISOString()}`)
    assert.isAtMost(at, after + minutes * 60_000 + 1_000, `expires ${new Date(at).toISOString()}, started ${new Date(after).toISOString()}`)
    return a
  })

/** A start, then the expiry moved back to a minute away (time passing), then page 1 saved: each time `minutes` later. */
const startAndSave = (minutes: number, userId: string) =>
  Effect.gen(function*() {
    yield* waitForKeys(signer)
    const formId = yield* createForm({ title: `Expiry ${minutes}`, steps: twoPages })
    const someone = member(signer, { userId, username: `u${userId.slice(-3)}` })
    const read = draftOf(formId, userId)
    const first = yield* expiresAfter(minutes, someone.pick(formId), read)
    assert.strictEqual(first.data?.title, `Expiry ${minutes} (1/2)`)

    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE form_drafts SET expires_at = now() + interval '1 minute' WHERE workflow_id = ${formId} AND user_id = ${userId}`
    const saved = yield* expiresAfter(minutes, someone.submit(first, fill(first)), read)
    assert.strictEqual(saved.data?.content, "Page 1 of 2 saved.")
    assert.strictEqual((yield* read).page, 1)
    // The draft is still usable: Continue opens page 2.
    assert.strictEqual((yield* someone.click(buttonsOf(saved).get("Continue")!)).data?.title, `Expiry ${minutes} (2/2)`)
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`draft expiry by default, on ${kind}`, (it) => {
    it.effect("30 minutes after the start, and 30 minutes after a saved page", () => startAndSave(30, "100000000000000401"))
  })

  layer(TestApp.layer({ capabilities: { db: kind }, config: { formDraftTtlMinutes: 7 } }), { excludeTestServices: true })(
    `draft expiry configured to 7 minutes, on ${kind}`,
    (it) => {
      it.effect("7 minutes after the start, and 7 minutes after a saved page", () => startAndSave(7, "100000000000000402"))
    }
  )
}

describe("FORM_DRAFT_TTL_MINUTES", () => {
  const load = (env: Record<string, string>) =>
    loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ...env } }))))

  plain.effect("sets the app's draft lifetime; 30 when unset", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({ FORM_DRAFT_TTL_MINUTES: "7" })).formDraftTtlMinutes, 7)
      assert.strictEqual((yield* load({})).formDraftTtlMinutes, 30)
    }))

  plain.effect("a value that is not a positive whole number is refused, naming the variable", () =>
    Effect.gen(function*() {
      for (const bad of ["0", "-5", "abc"]) {
        const error = yield* Effect.flip(load({ FORM_DRAFT_TTL_MINUTES: bad }))
        assert.include(error.message, "FORM_DRAFT_TTL_MINUTES", bad)
      }
    }))
})
