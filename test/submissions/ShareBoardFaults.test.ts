/**
 * The card under delivery.md §4's rules, against the sandbox's twin with faults by route: the board
 * refusing the credentials (the effect failed, its reason kept, the summary still posted), a 5xx
 * then success (one card), Trello's 429 waited out (one card, the job not failed), a board deleted,
 * and a worker killed after the card was created but before it was recorded (the marker written
 * before the create is found on the board: no second card).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { makeShareJobs, shareJobId, ShareQueue } from "../../src/layers/submissions/ShareJobs.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { alice, bob, carol, createForm, mod } from "./FlowHelpers.ts"
import type { As } from "./InteractionClient.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { APPLICATIONS, BOARD_ANSWERS, BOARD_STEPS, ROADMAP } from "./ShareBoardFixtures.ts"
import { channelMessages, fillText, pass, sandboxCall, settled, twinCards } from "./ShareHelpers.ts"
import { sandboxSigner } from "./InteractionSigner.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)

/** A passed submission of a new task-board form on `board`, with `before` run between the submit and the Pass. */
const shareOn = (title: string, as: As, board = ROADMAP, before: Effect.Effect<unknown, never, TestApp> = Effect.void) =>
  Effect.gen(function*() {
    const formId = yield* createForm({ title, steps: BOARD_STEPS, fwd_channel_ids: [FWD], taskboard_integration: true, taskboard_board: board })
    const id = yield* fillText(as, formId, BOARD_ANSWERS)
    yield* before
    yield* pass(id, "low")
    return yield* settled(id)
  })

const twinFault = (route: string, kind: string, extra: Record<string, unknown> = {}) =>
  Effect.asVoid(sandboxCall("POST", "/sandbox/faults", { route, kind, count: 1, ...extra }))

const cardsMarked = (marker: string | undefined) => Effect.map(twinCards(ROADMAP), (cs) => cs.filter((c) => marker !== undefined && c.desc.includes(`[ref ${marker}]`)))

/** The share job of a submission once it has finished (its effects settle just before). */
const finished = (id: string) =>
  Effect.gen(function*() {
    const engine = yield* JobEngine
    for (let i = 0; i < 100; i++) {
      const job = Option.getOrUndefined(yield* engine.job(ShareQueue, shareJobId(id)))
      if (job !== undefined && job.state !== "active" && job.state !== "created") return job
      yield* Effect.sleep("50 millis")
    }
    throw new Error(`the share job of ${id} never finished`)
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`the card's failures, on ${kind}`, (it) => {
    it.effect("the board refusing the credentials: the card failed with its reason, no card, the summary posted without a link", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const before = (yield* twinCards(ROADMAP)).length
        const s = yield* shareOn(`Refused ${kind}`, bob, ROADMAP, twinFault("GET /1/boards/{id}/lists", "401"))
        const card = s.effects.find((e) => e.kind === "card")
        assert.strictEqual(card?.state, "failed")
        assert.match(card?.reason ?? "", /^The task board refused the card: .*(401|credentials)/)
        assert.strictEqual(s.cardUrl, null)
        assert.strictEqual((yield* twinCards(ROADMAP)).length, before)
        const summary = (yield* channelMessages(FWD)).find((m) => m.id === s.effects.find((e) => e.kind === "summary")?.message_id)
        assert.deepStrictEqual((summary?.body["embeds"] as Array<unknown>)[0], { title: `Refused ${kind}`, color: 0x3366ff, fields: [] })
      }))

    it.effect("a 5xx on the create, then success: one card", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const s = yield* shareOn(`Flaky ${kind}`, carol, ROADMAP, twinFault("POST /1/cards", "500"))
        assert.strictEqual(s.effects.find((e) => e.kind === "card")?.state, "done")
        const made = (yield* twinCards(ROADMAP)).filter((c) => c.url === s.cardUrl)
        assert.strictEqual(made.length, 1)
        // The job was retried (the 5xx failed its first attempt), and the retry made the one card.
        assert.deepInclude(yield* finished(s.id), { retryCount: 1, state: "completed" })
      }))

    it.effect("Trello's 429 on the create is waited out (Retry-After): one card, the job not failed", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const started = Date.now()
        const s = yield* shareOn(`Limited ${kind}`, mod, ROADMAP, twinFault("POST /1/cards", "429", { retry_after: 2 }))
        assert.strictEqual(s.effects.find((e) => e.kind === "card")?.state, "done")
        assert.isAtLeast(Date.now() - started, 2000)
        assert.strictEqual((yield* twinCards(ROADMAP)).filter((c) => c.url === s.cardUrl).length, 1)
        assert.deepInclude(yield* finished(s.id), { retryCount: 0, state: "completed" })
      }))

    it.effect("a worker killed after the card was created, before it was recorded: no second card; killed before the create: one card", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const s = yield* shareOn(`Killed ${kind}`, alice)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ marker: string }>`SELECT marker FROM submission_effects WHERE submission_id = ${s.id} AND kind = 'card'`
        assert.strictEqual((yield* cardsMarked(row?.marker)).length, 1)
        // As a worker killed right after Trello answered the create: the marker written, nothing else recorded.
        yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL, progress = 0 WHERE submission_id = ${s.id} AND kind = 'card'`
        yield* sql`UPDATE form_submissions SET card_url = NULL WHERE id = ${s.id}`
        const jobs = yield* makeShareJobs
        yield* jobs.share(s.id)
        const again = (yield* (yield* SubmissionsRepo).get(s.id))!
        const marked = yield* cardsMarked(row?.marker)
        assert.strictEqual(marked.length, 1)
        assert.strictEqual(again.cardUrl, s.cardUrl)
        assert.deepInclude(again.effects.find((e) => e.kind === "card"), { state: "done", message_id: marked[0]!.id })
        // Killed after writing the marker, before the create: the card is not on the board, so it is made, once.
        yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL, progress = 0, marker = 'gw-neverCreated0' WHERE submission_id = ${s.id} AND kind = 'card'`
        yield* jobs.share(s.id)
        yield* jobs.share(s.id)
        assert.strictEqual((yield* cardsMarked("gw-neverCreated0")).length, 1)
      }))

    it.effect("a board deleted: the card failed with its reason, kept on the submission", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const s = yield* shareOn(`Deleted ${kind}`, bob, APPLICATIONS, sandboxCall("DELETE", `/sandbox/taskboard/boards/${APPLICATIONS}`).pipe(Effect.orDie))
        const card = s.effects.find((e) => e.kind === "card")
        assert.strictEqual(card?.state, "failed")
        assert.match(card?.reason ?? "", /^The task board refused the card: .*404/)
        assert.strictEqual(s.cardUrl, null)
        assert.strictEqual(s.effects.find((e) => e.kind === "summary")?.state, "done")
      }))

    it.effect("the last attempt keeps a failure that might have healed on the effect, never leaves it pending", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const formId = yield* createForm({ title: `Last ${kind}`, steps: BOARD_STEPS, taskboard_integration: true, taskboard_board: ROADMAP })
        const id = yield* fillText(carol, formId, BOARD_ANSWERS)
        yield* twinFault("POST /1/cards", "500")
        yield* pass(id)
        const engine = yield* JobEngine
        for (let i = 0; i < 200; i++) {
          const job = Option.getOrUndefined(yield* engine.job(ShareQueue, shareJobId(id)))
          if (job?.state === "retry") break
          yield* Effect.sleep("50 millis")
        }
        yield* twinFault("POST /1/cards", "500")
        yield* (yield* makeShareJobs).share(id, true)
        const s = (yield* (yield* SubmissionsRepo).get(id))!
        assert.deepInclude(s.effects.find((e) => e.kind === "card"), { state: "failed", message_id: null })
        assert.match(s.effects.find((e) => e.kind === "card")?.reason ?? "", /^The task board kept failing: Trello failed \(500/)
        assert.strictEqual(s.cardUrl, null)
      }))
  })
}
