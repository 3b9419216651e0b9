/**
 * The forms routes' reads over HTTP against the sandbox chat platform and task board, on a real
 * database: the option and board listings, the template, and how few task-board calls they need.
 * Writes, scoping and permissions: FormsHttpWrites.test.ts; validation: FormsHttpValidation.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { TestApp, tokenOf } from "../utils/TestApp.ts"
import { call, formsOverHttp, formsPath, OPTIONS, REAL_BOARDS } from "./FormsHttpFixtures.ts"

/** The sandbox's call counts (per route name), and their reset. */
const sandbox = (method: string, path: string) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const res = yield* Effect.promise(() => fetch(`${app.url}${path}`, { method }))
    const text = yield* Effect.promise(() => res.text())
    return text === "" ? undefined : JSON.parse(text)
  })
const taskBoardCalls = Effect.map(sandbox("GET", "/sandbox/stats"), (s: { calls: Record<string, number> }) =>
  // The task-board twin names its routes by Trello's paths ("GET /1/organizations/{teamId}/boards").
  Object.entries(s.calls).filter(([route]) => route.includes(" /1/")).reduce((n, [, c]) => n + c, 0))
const resetStats = sandbox("DELETE", "/sandbox/stats")

formsOverHttp("reads", (it) => {
  // First in the file: it needs the task board's cache cold (nothing before it reads S1's boards).
  describe("task-board calls (issue #12 item 17)", () => {
    it.effect("a burst of templates, board listings, creates, reads and updates on one server → one task-board call", () =>
      Effect.gen(function*() {
        yield* tokenOf(ALICE_ID)
        yield* resetStats
        const answers = yield* Effect.all([
          ...Array.from({ length: 20 }, () => call("GET", `${formsPath()}/new`)),
          ...Array.from({ length: 10 }, () => call("GET", `${formsPath()}/taskboardBoards`)),
          ...Array.from({ length: 10 }, (_, i) => call("POST", formsPath(), { title: `Burst ${i}` }))
        ], { concurrency: "unbounded" })
        for (const a of answers) assert.strictEqual(a.status, 200, JSON.stringify(a.body))
        const ids: Array<number> = answers.slice(30).map((a) => a.body.workflow_id)
        const reads = yield* Effect.forEach(ids, (id) => call("GET", `${formsPath()}/${id}`), { concurrency: "unbounded" })
        const writes = yield* Effect.forEach(ids, (id) => call("PATCH", `${formsPath()}/${id}`, { title: "Burst" }), { concurrency: "unbounded" })
        for (const a of [...reads, ...writes]) assert.strictEqual(a.status, 200, JSON.stringify(a.body))
        // 60 requests that each need S1's boards: one upstream call, shared (coalesced, then cached).
        assert.strictEqual(yield* taskBoardCalls, 1)
        for (const a of reads) assert.deepStrictEqual(a.body.taskboard_boards, reads[0]!.body.taskboard_boards)
        // An unpaired server needs no call at all.
        yield* resetStats
        assert.strictEqual((yield* call("GET", `${formsPath(S2_ID)}/new`)).status, 200)
        assert.strictEqual(yield* taskBoardCalls, 0)
        yield* Effect.forEach(ids, (id) => call("DELETE", `${formsPath()}/${id}`))
      }))
  })

  describe("listings and template", () => {
    it.effect("taskboardOptions lists the six option values", () =>
      Effect.gen(function*() {
        const r = yield* call("GET", `${formsPath()}/taskboardOptions`)
        assert.strictEqual(r.status, 200)
        assert.deepStrictEqual(r.body, { options: OPTIONS })
      }))

    it.effect("taskboardBoards: S1 (paired) lists 0 then the real open boards; S2 (unpaired) only -1", () =>
      Effect.gen(function*() {
        const s1 = yield* call("GET", `${formsPath()}/taskboardBoards`)
        assert.strictEqual(s1.status, 200, JSON.stringify(s1.body))
        assert.deepStrictEqual(s1.body.taskboard_boards.map((b: { id: string }) => b.id), ["0", ...REAL_BOARDS.map((b) => b.id)])
        assert.deepStrictEqual(s1.body.taskboard_boards.slice(1), REAL_BOARDS)
        const s2 = yield* call("GET", `${formsPath(S2_ID)}/taskboardBoards`)
        assert.strictEqual(s2.status, 200, JSON.stringify(s2.body))
        assert.deepStrictEqual(s2.body.taskboard_boards.map((b: { id: string }) => b.id), ["-1"])
      }))

    it.effect("the template equals the contract's defaults exactly", () =>
      Effect.gen(function*() {
        const r = yield* call("GET", `${formsPath()}/new`)
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const { taskboard_options, taskboard_boards, ...rest } = r.body
        assert.deepStrictEqual(rest, {
          workflow_id: null,
          channel_id: null,
          fwd_channel_ids: [],
          role_mentions: [],
          public_mentions: [],
          timestamp_created: null,
          taskboard_integration: false,
          taskboard_board: "-1",
          workflow_live: false,
          title: "TITLE_NOT_FOUND",
          color_hex: "#00d084",
          steps: [],
          // Not shown by the contract; decisions.md: an omitted flag is false.
          anonymize: false,
          disable_downvote: false,
          disable_upvote: false,
          extended_embed: false,
          highlight_attachments: false,
          anonymize_rejection: false,
          disable_mentions: false,
          disable_priorities: false
        })
        assert.deepStrictEqual(taskboard_options, OPTIONS)
        assert.deepStrictEqual(taskboard_boards.map((b: { id: string }) => b.id), ["0", ...REAL_BOARDS.map((b) => b.id)])
        const unpaired = yield* call("GET", `${formsPath(S2_ID)}/new`)
        assert.deepStrictEqual(unpaired.body.taskboard_boards.map((b: { id: string }) => b.id), ["-1"])
      }))
  })
})
