/**
 * The submissions routes (forms-runtime.md §6) through HTTP: the list (newest first, status filter,
 * the audit log's paging rules and refusals), one submission (answers from the snapshot with
 * `private`, votes, effects), and a review from the panel with the buttons' effects (the review
 * message edited, the member's DM), 409 naming the reviewer, and the body's rules.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BotId, FormId, ServerId } from "../../src/domain/infra/Ids.ts"
import { ALICE_ID, BOB_ID, BOT1_ID, CAROL_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { json, raw, tokenOf, typedClient } from "../utils/TestApp.ts"
import { call, channelMessages, createForm, eventually, FORMS, GENERAL, seedSubmission, submissionsOverHttp } from "./SubmissionsHttpFixtures.ts"

const params = (formId: number) => ({ appClientId: BotId.make(BOT1_ID), serverId: ServerId.make(S1_ID), formId: FormId.make(formId) })
const paths = (body: any) => (body.errors as Array<any>).map((e) => e.additionalProperties?.path)
const bob = { id: BOB_ID, name: "Bob" }
const carol = { id: CAROL_ID, name: "Carol" }

submissionsOverHttp("list, detail and review", (it) => {
  it.effect("the list is newest first, filtered by status, paged as the audit log; bad queries name their parameter", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Listed" })
      const first = yield* seedSubmission(formId, bob, ["Bob", "I like it", "bob@example.org"])
      const second = yield* seedSubmission(formId, carol, ["Carol", "To help", "carol@example.org"])
      const client = yield* typedClient(token)

      const all = yield* client.submissions.list({ params: params(formId), query: {} })
      assert.deepStrictEqual(all.submissions.map((s) => s.id), [second, first])
      assert.deepStrictEqual([all.page, all.page_size, all.page_max], [1, 10, 1])
      assert.deepInclude(all.submissions[1]!, { user_id: BOB_ID, user_name: "Bob", status: "pending", priority: null, reviewed_at: null, reviewer_name: null })

      const paged = yield* client.submissions.list({ params: params(formId), query: { page: "2", page_size: "1" } })
      assert.deepStrictEqual([paged.submissions.map((s) => s.id), paged.page, paged.page_size, paged.page_max], [[first], 2, 1, 2])
      const past = yield* client.submissions.list({ params: params(formId), query: { page: "9007199254740991", page_size: "100" } })
      assert.deepStrictEqual([past.submissions, past.page_max], [[], 1])

      yield* client.submissions.review({ params: { ...params(formId), submissionId: first }, payload: { decision: "drop" } })
      const denied = yield* client.submissions.list({ params: params(formId), query: { status: "denied" } })
      assert.deepStrictEqual(denied.submissions.map((s) => s.id), [first])
      const pending = yield* client.submissions.list({ params: params(formId), query: { status: "pending" } })
      assert.deepStrictEqual(pending.submissions.map((s) => s.id), [second])

      const bad = yield* call(token, "GET", `${FORMS}/${formId}/submissions?status=open&page=0&page_size=101`)
      assert.strictEqual(bad.status, 400)
      assert.sameMembers(paths(bad.body), ["status", "page", "page_size"])
      assert.strictEqual((yield* call(token, "GET", `${FORMS}/${formId}/submissions?page=x`)).status, 400)
      assert.strictEqual((yield* call(token, "GET", `${FORMS}/999999/submissions`)).status, 404)
      assert.strictEqual((yield* call(undefined, "GET", `${FORMS}/${formId}/submissions`)).status, 401)
      assert.strictEqual((yield* call(yield* tokenOf(BOB_ID), "GET", `${FORMS}/${formId}/submissions`)).status, 403)
    }))

  it.effect("one submission: answers from the snapshot (private marked), no votes yet, its effects", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Detailed" })
      const id = yield* seedSubmission(formId, bob, ["Bob", "I like it", "bob@example.org"])
      // A later edit of the form changes nothing of the submission: it keeps its snapshot.
      const edited = yield* call(token, "PATCH", `${FORMS}/${formId}`, { title: "Detailed", channel_id: GENERAL, steps: [{ type: "message", string: "Other?" }] })
      assert.strictEqual(edited.status, 200)
      const client = yield* typedClient(token)
      const detail = yield* eventually(
        client.submissions.get({ params: { ...params(formId), submissionId: id } }),
        (d) => d.effects.some((e) => e.kind === "review_message" && e.state === "done")
      )
      assert.deepStrictEqual(detail.answers.map((a) => [a.question, a.alias, a.answer, a.private]), [
        ["Your name?", null, "Bob", false],
        ["Why do you want to join?", "Motivation", "I like it", false],
        ["Your e-mail address?", null, "bob@example.org", true]
      ])
      assert.deepStrictEqual(detail.votes, { up: 0, down: 0 })
      assert.deepStrictEqual([detail.card_url, detail.reason, detail.status], [null, null, "pending"])
      const review = detail.effects.find((e) => e.kind === "review_message")!
      assert.deepInclude(review, { state: "done", reason: null, channel_id: GENERAL })
      const inChannel = (yield* channelMessages(GENERAL)).find((m) => m.id === review.message_id)
      assert.strictEqual(inChannel.body.embeds[0].footer.text, `Submission ${id}`)

      assert.strictEqual((yield* call(token, "GET", `${FORMS}/${formId}/submissions/999999999`)).status, 404)
      const other = yield* createForm(token, { title: "Another" })
      assert.strictEqual((yield* call(token, "GET", `${FORMS}/${other}/submissions/${id}`)).status, 404, "a submission of another form")
      const malformed = yield* call(token, "GET", `${FORMS}/${formId}/submissions/1e3`)
      assert.strictEqual(malformed.status, 400)
      assert.deepStrictEqual(paths(malformed.body), ["submissionId"])
    }))

  it.effect("review as the signed-in user: the buttons' effects, audited; a second review is a 409 naming the reviewer", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Reviewed" })
      const id = yield* seedSubmission(formId, bob, ["Bob", "I like it", "bob@example.org"])
      const client = yield* typedClient(token)
      // The review message is in the channel before the review, so the review edits it.
      const posted = yield* eventually(
        client.submissions.get({ params: { ...params(formId), submissionId: id } }),
        (d) => d.effects.some((e) => e.kind === "review_message" && e.state === "done")
      )
      const messageId = posted.effects.find((e) => e.kind === "review_message")!.message_id

      const decided = yield* client.submissions.review({ params: { ...params(formId), submissionId: id }, payload: { decision: "pass", priority: "high" } })
      assert.deepInclude(decided, { status: "accepted", priority: "high" })
      assert.isString(decided.reviewed_at)
      const reviewer = decided.reviewer_name!
      assert.match(reviewer, /alice/i)

      const edited = yield* eventually(
        Effect.map(channelMessages(GENERAL), (ms) => ms.find((m) => m.id === messageId)),
        (m) => m?.body.content === `Passed by ${reviewer} — priority high`
      )
      assert.strictEqual(edited.body.content, `Passed by ${reviewer} — priority high`)
      assert.deepStrictEqual(edited.body.components ?? [], [], "the buttons are gone")
      const dms = yield* eventually(
        Effect.flatMap(raw({}, `/sandbox/discord/dms?user_id=${BOB_ID}`), json),
        (b) => (b.messages as Array<any>).some((d) => /^Reviewed on .+: accepted$/.test(d.body.content))
      )
      assert.isTrue((dms.messages as Array<any>).some((d) => /^Reviewed on .+: accepted$/.test(d.body.content)), JSON.stringify(dms))

      const again = yield* call(token, "POST", `${FORMS}/${formId}/submissions/${id}/review`, { decision: "drop" })
      assert.strictEqual(again.status, 409)
      assert.deepStrictEqual(Object.keys(again.body), ["errors"])
      assert.include(again.body.errors[0].message, reviewer)

      const logs = yield* call(token, "GET", `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/logs?module=forms&page_size=100`)
      const entry = (logs.body.logs as Array<any>).find((l) => l.event_string === `submission ${id} passed`)
      assert.isDefined(entry)
      assert.deepInclude(entry, { event_type: "PATCH", user_id: ALICE_ID, item_identifier: formId })
    }))

  it.effect("the review body's rules: priority only with pass and not when disabled, reason ≤ 1,000 only with drop; nothing changes", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const sql = yield* SqlClient.SqlClient
      const formId = yield* createForm(token, { title: "Rules" })
      const plain = yield* createForm(token, { title: "No priorities", disable_priorities: true })
      const id = yield* seedSubmission(formId, bob, ["Bob", "x", "y"])
      const other = yield* seedSubmission(plain, carol, ["Carol", "x", "y"])
      const state = Effect.map(sql`SELECT status, reviewer_id FROM form_submissions ORDER BY id`, (r) => JSON.stringify(r))
      const audits = Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM audit_entries`, (r) => r[0]!.n)
      const before = [yield* state, yield* audits]
      const review = (form: number, sub: string, body: unknown) => call(token, "POST", `${FORMS}/${form}/submissions/${sub}/review`, body)

      const cases: ReadonlyArray<readonly [number, string, unknown, ReadonlyArray<string>]> = [
        [formId, id, { decision: "drop", priority: "low" }, ["priority"]],
        [formId, id, { decision: "pass", reason: "why" }, ["reason"]],
        [formId, id, { decision: "drop", reason: "x".repeat(1001) }, ["reason"]],
        [formId, id, { decision: "maybe" }, ["decision"]],
        [formId, id, { decision: "pass", priority: "urgent" }, ["priority"]],
        [plain, other, { decision: "pass", priority: "low" }, ["priority"]]
      ]
      for (const [form, sub, body, expected] of cases) {
        const r = yield* review(form, sub, body)
        assert.strictEqual(r.status, 400, JSON.stringify(body))
        assert.deepStrictEqual(paths(r.body), [...expected], JSON.stringify(r.body))
      }
      assert.strictEqual((yield* review(formId, "999999999", { decision: "pass" })).status, 404)
      assert.strictEqual((yield* review(plain, id, { decision: "pass" })).status, 404, "a submission of another form")
      assert.strictEqual((yield* call(yield* tokenOf(BOB_ID), "POST", `${FORMS}/${formId}/submissions/${id}/review`, { decision: "pass" })).status, 403)
      assert.deepStrictEqual([yield* state, yield* audits], before, "nothing reviewed, nothing audited")

      // A reason of exactly 1,000 characters (astral ones counted once) is taken, and shown back.
      const reason = "🙂".repeat(1000)
      const dropped = yield* review(formId, id, { decision: "drop", reason })
      assert.strictEqual(dropped.status, 200, JSON.stringify(dropped.body))
      assert.deepInclude(dropped.body, { status: "denied", priority: null, reason })
      const passed = yield* review(plain, other, { decision: "pass" })
      assert.deepInclude(passed.body, { status: "accepted", priority: null })
    }))
})
