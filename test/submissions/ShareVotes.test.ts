/**
 * Votes on a public summary (forms-runtime.md §5), by signed clicks as the platform sends them:
 * many members voting and changing their minds at once — the counts exact on the submission and on
 * the message (UPDATE_MESSAGE); `disable_upvote` / `disable_downvote` refused with nothing stored;
 * a submission not accepted takes no vote; the summaries in the other forwarding channels follow
 * (a job's edit), and so does the clicked one after a burst of concurrent clicks.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { voteCustomId } from "../../src/services/submissions/Share.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, carol, createForm, member } from "./FlowHelpers.ts"
import type { As } from "./InteractionClient.ts"
import { buttonsOf, waitForKeys } from "./InteractionClient.ts"
import { channelMessages, fillText, pass, settled } from "./ShareHelpers.ts"
import { sandboxSigner } from "./InteractionSigner.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)
const FWD_NEWS = channelId(1, CHANNEL_INDEX.news)
const STEPS = [{ type: "message", string: "Idea?", char_limit: [1, 100] }]
const voter = (n: number): As => ({ userId: `1000000000000${String(500 + n).padStart(5, "0")}`, username: `voter${n}` })

/** A passed submission of a new form and its summary's message id. */
const shared = (title: string, flags: Record<string, unknown> = {}, as: As = bob) =>
  Effect.gen(function*() {
    const formId = yield* createForm({ title, steps: STEPS, fwd_channel_ids: [FWD], ...flags })
    const id = yield* fillText(as, formId, ["More dark mode"])
    yield* pass(id)
    const s = yield* settled(id)
    return { id, messageId: s.effects.find((e) => e.kind === "summary")!.message_id! }
  })

/** The vote buttons' labels on a channel's message as the platform holds it now. */
const labelsOn = (channel: string, messageId: string) =>
  Effect.map(channelMessages(channel), (ms) => {
    const rows = (ms.find((m) => m.id === messageId)?.body["components"] ?? []) as ReadonlyArray<{ components: ReadonlyArray<{ label: string }> }>
    return rows.flatMap((r) => r.components.map((b) => b.label)).join(" ")
  })

/** Polls `labelsOn` until it shows `want` (a job's edit), at most 15 s; the last labels seen otherwise. */
const labelsBecome = (channel: string, messageId: string, want: string) =>
  Effect.gen(function*() {
    let seen = ""
    for (let i = 0; i < 150; i++) {
      seen = yield* labelsOn(channel, messageId)
      if (seen === want) break
      yield* Effect.sleep("100 millis")
    }
    return seen
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`votes on a summary, on ${kind}`, (it) => {
    it.effect("24 members voting and changing their minds at once: the counts exact, on the submission and the message", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const { id, messageId } = yield* shared(`Votes ${kind}`)
        const up = voteCustomId("up", id)
        const down = voteCustomId("down", id)
        // Per member, in order: up (stays up); up up (taken back); up down (moved: down); down up down down (none).
        const plans = [[up], [up, up], [up, down], [down, up, down, down]]
        // All 24 at once on PostgreSQL; 8 at a time on the embedded database, whose one connection
        // takes them in turn (24 clicks queued on it on a loaded machine reach the answer's 2 s deadline).
        const answers = yield* Effect.forEach(Array.from({ length: 24 }, (_, n) => n), (n) =>
          Effect.forEach(plans[n % 4]!, (click) => member(sandboxSigner, voter(n)).click(click, messageId)), { concurrency: kind === "postgres" ? 24 : 8 })
        for (const a of answers.flat()) {
          assert.strictEqual(a.type, 7)
          assert.match([...buttonsOf(a).keys()].join(" "), /^▲ \d+ ▼ \d+$/)
        }
        const s = yield* (yield* SubmissionsRepo).get(id)
        assert.deepStrictEqual(s!.votes, { up: 6, down: 6 })
        // One more vote: the message shows the counts, the summary otherwise as posted.
        const last = yield* member(sandboxSigner, voter(99)).click(up, messageId)
        const posted = (yield* channelMessages(FWD)).find((m) => m.id === messageId)!
        const { nonce: _n, enforce_nonce: _e, ...body } = posted.body
        assert.deepStrictEqual(last, {
          type: 7,
          data: {
            ...body,
            components: [{ type: 1, components: [
              { type: 2, style: 2, label: "▲ 7", custom_id: up },
              { type: 2, style: 2, label: "▼ 6", custom_id: down }
            ] }]
          }
        })
        assert.deepStrictEqual((yield* (yield* SubmissionsRepo).get(id))!.votes, { up: 7, down: 6 })
      }))

    it.effect("members double-clicking (both clicks at once): never two votes of one member, never an error", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const { id, messageId } = yield* shared(`Double ${kind}`, {}, carol)
        const up = voteCustomId("up", id)
        const answers = yield* Effect.forEach(Array.from({ length: 40 }, (_, n) => n % 20), (n) =>
          member(sandboxSigner, voter(200 + n)).click(up, messageId), { concurrency: 40 })
        for (const a of answers) assert.strictEqual(a.type, 7, JSON.stringify(a))
        const votes = (yield* (yield* SubmissionsRepo).get(id))!.votes
        assert.strictEqual(votes.down, 0)
        assert.isAtMost(votes.up, 20)
        // Whatever the races did, one more click of each member leaves each with at most one vote.
        const sql = yield* SqlClient.SqlClient
        const [dup] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT user_id FROM submission_votes WHERE submission_id = ${id} GROUP BY user_id HAVING count(*) > 1) d`
        assert.strictEqual(dup!.n, 0)
      }))

    it.effect("a summary in two channels: a vote on one shows on both; a burst of clicks ends with the exact counts everywhere", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const formId = yield* createForm({ title: `Two channels ${kind}`, steps: STEPS, fwd_channel_ids: [FWD, FWD_NEWS] })
        const id = yield* fillText(bob, formId, ["Shared twice"])
        yield* pass(id)
        const s = yield* settled(id)
        const at = (channel: string) => s.effects.find((e) => e.kind === "summary" && e.target === channel)!.message_id!
        const [inFwd, inNews] = [at(FWD), at(FWD_NEWS)]
        assert.strictEqual(yield* labelsOn(FWD_NEWS, inNews), "▲ 0 ▼ 0")
        const up = voteCustomId("up", id)
        yield* member(sandboxSigner, voter(300)).click(up, inFwd)
        assert.strictEqual(yield* labelsBecome(FWD_NEWS, inNews, "▲ 1 ▼ 0"), "▲ 1 ▼ 0")
        // 12 members at once on both messages: whatever order the answers landed in, both end exact.
        yield* Effect.forEach(Array.from({ length: 12 }, (_, n) => n), (n) =>
          member(sandboxSigner, voter(310 + n)).click(n % 3 === 0 ? voteCustomId("down", id) : up, n % 2 === 0 ? inFwd : inNews), { concurrency: 12 })
        assert.deepStrictEqual((yield* (yield* SubmissionsRepo).get(id))!.votes, { up: 9, down: 4 })
        assert.strictEqual(yield* labelsBecome(FWD, inFwd, "▲ 9 ▼ 4"), "▲ 9 ▼ 4")
        assert.strictEqual(yield* labelsBecome(FWD_NEWS, inNews, "▲ 9 ▼ 4"), "▲ 9 ▼ 4")
      }))

    it.effect("a disabled direction is refused and stores nothing; the other still counts", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        for (const [flag, off, on, label] of [["disable_downvote", "down", "up", "Downvotes"], ["disable_upvote", "up", "down", "Upvotes"]] as const) {
          const { id, messageId } = yield* shared(`Off ${flag} ${kind}`, { [flag]: true }, carol)
          const refused = yield* member(sandboxSigner, voter(1)).click(voteCustomId(off, id), messageId)
          assert.deepStrictEqual(refused as unknown, { type: 4, data: { content: `${label} are turned off for this form.`, flags: 64, allowed_mentions: { parse: [] } } })
          assert.deepStrictEqual((yield* (yield* SubmissionsRepo).get(id))!.votes, { up: 0, down: 0 })
          const counted = yield* member(sandboxSigner, voter(1)).click(voteCustomId(on, id), messageId)
          assert.deepStrictEqual([...buttonsOf(counted).keys()], [on === "up" ? "▲ 1" : "▼ 1"])
          assert.deepStrictEqual((yield* (yield* SubmissionsRepo).get(id))!.votes, on === "up" ? { up: 1, down: 0 } : { up: 0, down: 1 })
        }
      }))

    it.effect("a submission not accepted, or unknown, takes no vote", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const formId = yield* createForm({ title: `Pending ${kind}`, steps: STEPS, fwd_channel_ids: [FWD] })
        const id = yield* fillText(bob, formId, ["Wait"])
        const early = yield* member(sandboxSigner, voter(2)).click(voteCustomId("up", id))
        assert.strictEqual(early.data?.content, "Only accepted submissions take votes.")
        const unknown = yield* member(sandboxSigner, voter(2)).click(voteCustomId("up", "999999"))
        assert.strictEqual(unknown.data?.content, "This submission no longer exists.")
        assert.deepStrictEqual((yield* (yield* SubmissionsRepo).get(id))!.votes, { up: 0, down: 0 })
      }))
  })
}
