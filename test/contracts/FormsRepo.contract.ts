/**
 * The FormsRepo contract: forms and their steps round-trip, scoped to (bot, server); transactions roll
 * back; a value the database cannot store is a BadRequest at its path; the limit holds under
 * concurrency; concurrent updates never mix two versions. On every layer.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Layer } from "effect"
import { BadRequest } from "../../src/domain/infra/Errors.ts"
import { FormsLimitReached, FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { BOT, formData, OTHER_SERVER, SERVER, step } from "../forms/FormFixtures.ts"

const scope = { botId: BOT, serverId: SERVER }

export const formsRepoContract = (name: string, repoLayer: Layer.Layer<FormsRepo, unknown>) =>
  layer(repoLayer, { excludeTestServices: true })(`FormsRepo contract (${name})`, (it) => {
    it.effect("round trip: create, read, list, update with steps reordered/added/removed, delete", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const created = yield* repo.create(scope, formData("Applications", [
          step("Why?", { alias: "why", char_limit: [5, 500] }),
          step("Pick one", { type: "reaction", answers_validation: ["yes", "no"], taskboard_mapping: "Title" }),
          step("Anything else?")
        ], { channel_id: "1", fwd_channel_ids: ["2", "3"], role_mentions: ["4"], workflow_live: true, color_hex: "#AbCdEf" }))
        assert.isTrue(created.workflow_id > 0)
        assert.deepStrictEqual(created.steps.map((s) => s.step_id), [1, 2, 3])
        assert.deepStrictEqual(created.steps[0], {
          step_id: 1, type: "message", string: "Why?", answers_validation: [], char_limit: [5, 500], alias: "why", taskboard_mapping: ""
        })
        assert.isFalse(Number.isNaN(Date.parse(created.timestamp_created)))

        const read = yield* repo.find(scope, created.workflow_id)
        assert.deepStrictEqual(Option.getOrThrow(read), created)

        const second = yield* repo.create(scope, formData("Reports"))
        assert.isTrue(second.workflow_id > created.workflow_id)
        const list = yield* repo.list(scope)
        assert.deepStrictEqual(list, [
          { workflow_id: created.workflow_id, taskboard_integration: false, workflow_live: true, title: "Applications", color_hex: "#AbCdEf" },
          { workflow_id: second.workflow_id, taskboard_integration: false, workflow_live: false, title: "Reports", color_hex: "#00d084" }
        ])

        // Reorder (3rd first), drop the 1st, add a new one at the end.
        const updated = yield* repo.update(scope, created.workflow_id, formData("Applications v2", [
          step("Anything else?"),
          step("Pick one", { type: "reaction", answers_validation: ["yes", "no"], taskboard_mapping: "Title" }),
          step("New question", { char_limit: [10, 20] })
        ], { taskboard_integration: true, taskboard_board: "b-1" }))
        const form = Option.getOrThrow(updated)
        assert.deepStrictEqual(form.steps.map((s) => [s.step_id, s.string]), [[1, "Anything else?"], [2, "Pick one"], [3, "New question"]])
        assert.strictEqual(form.timestamp_created, created.timestamp_created)
        assert.strictEqual(form.channel_id, null)
        assert.deepStrictEqual(form.fwd_channel_ids, [])
        assert.isFalse(form.workflow_live)
        assert.isTrue(form.taskboard_integration)
        assert.strictEqual(form.taskboard_board, "b-1")
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(scope, created.workflow_id)), form)

        const fewer = yield* repo.update(scope, created.workflow_id, formData("Applications v3", [step("Only one")]))
        assert.deepStrictEqual(Option.getOrThrow(fewer).steps.map((s) => [s.step_id, s.string]), [[1, "Only one"]])

        const removed = yield* repo.remove(scope, created.workflow_id)
        assert.strictEqual(Option.getOrThrow(removed).title, "Applications v3")
        assert.isTrue(Option.isNone(yield* repo.find(scope, created.workflow_id)))
        assert.isTrue(Option.isNone(yield* repo.remove(scope, created.workflow_id)))
        assert.isTrue(Option.isNone(yield* repo.update(scope, created.workflow_id, formData("x"))))
        assert.deepStrictEqual((yield* repo.list(scope)).map((f) => f.workflow_id), [second.workflow_id])
      }))

    it.effect("a form of another server or bot is not found, and cannot be changed or removed", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const form = yield* repo.create(scope, formData("Mine", [step("q")]))
        for (const other of [{ botId: BOT, serverId: OTHER_SERVER }, { botId: "900000000000000002", serverId: SERVER }]) {
          assert.isTrue(Option.isNone(yield* repo.find(other, form.workflow_id)))
          assert.isTrue(Option.isNone(yield* repo.update(other, form.workflow_id, formData("Theirs"))))
          assert.isTrue(Option.isNone(yield* repo.remove(other, form.workflow_id)))
          assert.notInclude((yield* repo.list(other)).map((f) => f.workflow_id), form.workflow_id)
        }
        assert.strictEqual(Option.getOrThrow(yield* repo.find(scope, form.workflow_id)).title, "Mine")
      }))

    it.effect("transaction: a failure after the writes rolls every one of them back", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const rollback = { botId: BOT, serverId: "800000000000000077" }
        const kept = yield* repo.create(rollback, formData("Kept", [step("a")]))
        const failed = yield* Effect.flip(repo.transaction(Effect.gen(function*() {
          yield* repo.create(rollback, formData("Lost"))
          yield* repo.update(rollback, kept.workflow_id, formData("Changed", [step("b"), step("c")]))
          return yield* Effect.fail("boom" as const)
        })))
        assert.strictEqual(failed, "boom")
        assert.deepStrictEqual((yield* repo.list(rollback)).map((f) => f.title), ["Kept"])
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(rollback, kept.workflow_id)), kept)
      }))

    it.effect("a string the database cannot store (U+0000) → BadRequest at its path; nothing is written", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const nul = { botId: BOT, serverId: "800000000000000078" }
        const paths = (e: BadRequest) => e.problems.map((p) => p.additionalProperties?.["path"])
        const bad = formData("a\u0000b", [step("ok"), step("fine", { alias: "x\u0000" })], { fwd_channel_ids: ["1", "\u0000"] })
        const created = yield* Effect.flip(repo.create(nul, bad))
        assert.instanceOf(created, BadRequest)
        assert.sameMembers(paths(created), ["title", "fwd_channel_ids[1]", "steps[1].alias"])

        const kept = yield* repo.create(nul, formData("Kept", [step("a")]))
        const updated = yield* Effect.flip(repo.update(nul, kept.workflow_id, formData("\u0000")))
        assert.deepStrictEqual(paths(updated as BadRequest), ["title"])
        // Inside the caller's transaction (how Forms writes) the refusal ends it cleanly: the store still works.
        const inTx = yield* Effect.flip(repo.transaction(repo.create(nul, formData("t", [step("\u0000")]))))
        assert.deepStrictEqual(paths(inTx as BadRequest), ["steps[0].string"])
        assert.deepStrictEqual((yield* repo.list(nul)).map((f) => f.title), ["Kept"])
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(nul, kept.workflow_id)), kept)
      }))

    it.effect("limit: 20 concurrent creates against a limit of 5 → exactly 5 stored, the rest FormsLimitReached", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const limited = { botId: BOT, serverId: "800000000000000079" }
        const results = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => Effect.result(repo.transaction(repo.create(limited, formData(`F${i}`), 5))),
          { concurrency: "unbounded" }
        )
        const refused = results.filter((r) => r._tag === "Failure").map((r) => r.failure)
        assert.strictEqual(results.length - refused.length, 5)
        for (const e of refused) {
          assert.instanceOf(e, FormsLimitReached)
          assert.strictEqual((e as FormsLimitReached).limit, 5)
        }
        assert.strictEqual((yield* repo.list(limited)).length, 5)
        // Another scope has its own count; no limit given, no limit applied.
        yield* repo.create({ ...limited, botId: "900000000000000002" }, formData("Other bot"), 5)
        yield* repo.create(limited, formData("Unlimited"))
        assert.strictEqual((yield* repo.list(limited)).length, 6)
      }))

    it.effect("20 concurrent updates of one form: the final form is exactly one of them", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const form = yield* repo.create(scope, formData("Race", [step("start")]))
        const versions = Array.from({ length: 20 }, (_, v) =>
          formData(`Race ${v}`, Array.from({ length: 1 + (v % 7) }, (_, i) => step(`v${v} q${i}`, { char_limit: [1, 100 + v] }))))
        yield* Effect.forEach(versions, (data) => repo.update(scope, form.workflow_id, data), { concurrency: "unbounded" })
        const final = Option.getOrThrow(yield* repo.find(scope, form.workflow_id))
        const winner = versions.find((v) => v.title === final.title)
        assert.isDefined(winner)
        assert.deepStrictEqual(
          final.steps,
          winner!.steps.map((s, i) => ({ ...s, step_id: i + 1 }))
        )
      }))
  })
