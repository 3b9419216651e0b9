/**
 * The pure rules of the submissions routes (forms-runtime.md §2, §6), table-driven: a panel review's
 * body against its form, the start message of a form, and a submission as the detail shows it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { templateDefaults } from "../../src/domain/forms/Form.ts"
import type { StoredForm } from "../../src/domain/forms/Form.ts"
import { checkReview } from "../../src/services/submissions/ReviewRequest.ts"
import { colorOf, startMessage } from "../../src/services/submissions/StartMessage.ts"
import type { Submission } from "../../src/services/submissions/SubmissionsRepo.ts"
import { toDetail } from "../../src/services/submissions/SubmissionView.ts"

const paths = (r: ReturnType<typeof checkReview>) =>
  Result.isFailure(r) ? r.failure.problems.map((p) => p.additionalProperties?.["path"]) : "ok"

describe("checkReview", () => {
  const withPriorities = { disable_priorities: false }
  const without = { disable_priorities: true }
  const table: ReadonlyArray<readonly [string, Parameters<typeof checkReview>[0], { disable_priorities: boolean }, unknown]> = [
    ["pass", { decision: "pass" }, withPriorities, "ok"],
    ["pass with a priority", { decision: "pass", priority: "low" }, withPriorities, "ok"],
    ["pass with a priority, priorities disabled", { decision: "pass", priority: "low" }, without, ["priority"]],
    ["pass without a priority, priorities disabled", { decision: "pass" }, without, "ok"],
    ["drop with a priority", { decision: "drop", priority: "high" }, withPriorities, ["priority"]],
    ["pass with a reason", { decision: "pass", reason: "no" }, withPriorities, ["reason"]],
    ["drop with both", { decision: "drop", priority: "high", reason: "x" }, withPriorities, ["priority"]],
    ["pass with both, disabled", { decision: "pass", priority: "high", reason: "x" }, without, ["priority", "reason"]],
    ["drop, reason of 1,000 astral characters", { decision: "drop", reason: "😀".repeat(1000) }, withPriorities, "ok"],
    ["drop, reason of 1,001", { decision: "drop", reason: "x".repeat(1001) }, withPriorities, ["reason"]]
  ]
  for (const [name, input, form, expected] of table) {
    it(name, () => assert.deepStrictEqual(paths(checkReview(input, form)), expected))
  }
  it("a blank reason is no reason; the decision and priority are kept", () => {
    assert.deepStrictEqual(Result.getOrThrow(checkReview({ decision: "drop", reason: "  " }, withPriorities)), { decision: "drop", priority: null, reason: null })
    assert.deepStrictEqual(Result.getOrThrow(checkReview({ decision: "pass", priority: "medium" }, withPriorities)), { decision: "pass", priority: "medium", reason: null })
  })
})

describe("startMessage", () => {
  it("an embed with the title and colour, and a Start button the runtime answers", () => {
    const body = startMessage({ workflow_id: 42, title: "Bug report", color_hex: "#5865F2" })
    assert.deepInclude((body.embeds as Array<any>)[0], { title: "Bug report", color: 0x5865f2 })
    assert.deepStrictEqual((body.components as Array<any>)[0].components, [{ type: 2, style: 1, label: "Start", custom_id: "f:start:42" }])
    assert.deepStrictEqual(body.allowed_mentions, { parse: [] })
  })
  for (const [hex, n] of [["#000000", 0], ["#ffffff", 0xffffff], ["ffffff", 0], ["#fff", 0], ["#gggggg", 0]] as const) {
    it(`colorOf(${hex})`, () => assert.strictEqual(colorOf(hex), n))
  }
})

describe("toDetail", () => {
  const form: StoredForm = {
    ...templateDefaults,
    workflow_id: 7,
    timestamp_created: "2026-01-01T00:00:00Z",
    title: "T",
    channel_id: "1",
    fwd_channel_ids: [],
    role_mentions: [],
    public_mentions: [],
    steps: [
      { step_id: 3, type: "message", string: "Name?", answers_validation: [], char_limit: [1, 10], alias: "", taskboard_mapping: "Title" },
      { step_id: 5, type: "message", string: "Mail?", answers_validation: [], char_limit: [1, 10], alias: "E-mail", taskboard_mapping: "Private" },
      { step_id: 9, type: "reaction", string: "Colour?", answers_validation: ["Red"], char_limit: [0, 0], alias: "", taskboard_mapping: "" }
    ]
  }
  const submission: Submission = {
    id: "12", workflowId: 7, botId: "b", serverId: "s", userId: "u", userName: "Bob", userAvatar: null, snapshot: form,
    answers: { "3": "Bob", "5": "bob@example.org" }, status: "denied", priority: null, reason: "Too short", reviewerId: "r",
    reviewerName: "Mod", reviewedAt: new Date("2026-01-02T03:04:05Z"), dm: "sent", createdAt: new Date("2026-01-01T00:00:00Z"), votes: { up: 3, down: 1 }, cardUrl: "https://trello.com/c/abc",
    effects: [{ kind: "review_message", target: "", state: "failed", reason: "403", channel_id: "1", message_id: null }]
  }
  it("answers in the snapshot's order, aliases null when unset, Private-mapped steps marked, a missing answer empty", () => {
    const d = toDetail(submission)
    assert.deepStrictEqual(d.answers, [
      { step_id: 3, question: "Name?", alias: null, answer: "Bob", private: false },
      { step_id: 5, question: "Mail?", alias: "E-mail", answer: "bob@example.org", private: true },
      { step_id: 9, question: "Colour?", alias: null, answer: "", private: false }
    ])
    assert.deepInclude(d, { id: "12", status: "denied", reason: "Too short", reviewer_name: "Mod", reviewed_at: "2026-01-02T03:04:05.000Z", created_at: "2026-01-01T00:00:00.000Z", card_url: "https://trello.com/c/abc" })
    assert.deepStrictEqual(d.votes, { up: 3, down: 1 })
    assert.deepStrictEqual(d.effects, [{ kind: "review_message", state: "failed", reason: "403", channel_id: "1", message_id: null }])
  })
})
