/**
 * The interactions endpoint is outside the API's rate limits (forms-runtime.md §1): with the API
 * limited to 5 requests a minute, the API refuses its 6th request with 429 while 60 signed
 * interactions (PINGs, `/submit`, form starts by many members) are all answered 200, before and after
 * the API's refusal.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { createForm, FORMS } from "./FlowHelpers.ts"
import { interaction, send, waitForKeys } from "./InteractionClient.ts"
import type { As } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { twoSteps } from "./PlayerFixtures.ts"

const API_LIMIT = 5

/** Twenty interactions: a PING, then `/submit` and a start of the form for members 0–8 of this batch. */
const batch = (formId: number, batchNo: number) =>
  Effect.gen(function*() {
    const answers: Array<{ status: number; type: number | undefined }> = []
    const record = (r: { status: number; body: { type?: number } }) => answers.push({ status: r.status, type: r.body.type })
    record(yield* send(BOT1_ID, { id: "1", application_id: BOT1_ID, type: 1, token: "t", version: 1 }, { signer }))
    record(yield* send(BOT1_ID, interaction(BOT1_ID, S1_ID, someone(batchNo, 9), 1), { signer }))
    for (let n = 0; n < 9; n++) {
      const as = someone(batchNo, n)
      record(yield* send(BOT1_ID, interaction(BOT1_ID, S1_ID, as, 2, { id: "1", name: "submit", type: 1 }), { signer }))
      record(yield* send(BOT1_ID, interaction(BOT1_ID, S1_ID, as, 3, { custom_id: "f:pick", component_type: 3, values: [String(formId)] }, { message: { id: "1" } }), { signer }))
    }
    return answers
  })
const someone = (batchNo: number, n: number): As => ({ userId: `1000000000000005${batchNo}${n}`, username: `m${batchNo}${n}` })

/** The API as alice, `n` times: the statuses. */
const apiCalls = (n: number) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const statuses: Array<number> = []
    for (let i = 0; i < n; i++) statuses.push((yield* raw({ token }, FORMS)).status)
    return statuses
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind }, config: { rateLimitApiPerMinute: API_LIMIT } }), { excludeTestServices: true })(
    `interactions and the API's rate limit (${API_LIMIT} a minute), on ${kind}`,
    (it) => {
      it.effect("60 interactions answered 200 while the API refuses past its limit", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          // One API request (the create), then the API's own limit reached.
          const formId = yield* createForm({ title: "Unlimited", steps: twoSteps })
          const before = yield* batch(formId, 1)

          const statuses = yield* apiCalls(API_LIMIT + 2)
          assert.deepStrictEqual(statuses, [...Array(API_LIMIT - 1).fill(200), 429, 429, 429])

          const after = [...(yield* batch(formId, 2)), ...(yield* batch(formId, 3))]
          const all = [...before, ...after]
          assert.strictEqual(all.length, 60)
          assert.deepStrictEqual(all.map((a) => a.status), Array(60).fill(200))
          // Real answers, not refusals in a 200: PONGs, the ephemeral lists and the modals of the starts.
          assert.deepStrictEqual(before.slice(0, 4).map((a) => a.type), [1, 1, 4, 9])
          assert.deepStrictEqual(all.filter((a) => a.type === 9).length, 27)
          // The API still refuses: the interactions did not reset it either.
          assert.strictEqual((yield* apiCalls(1))[0], 429)
        }))
    }
  )
}
