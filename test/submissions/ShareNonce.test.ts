/**
 * A summary posted, then its worker killed before recording it (forms-runtime.md §5, delivery.md
 * §4): the job run again posts with the same `nonce` and `enforce_nonce`, so the platform answers
 * with the first message — one summary, its id recorded. The sandbox's channels do not keep nonces
 * yet: the platform is the recorder here (test/submissions/PlatformRecorder.ts), which does.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BOT1_ID, CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { makeShareJobs, summaryNonce } from "../../src/layers/submissions/ShareJobs.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, createForm } from "./FlowHelpers.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { makeRecorder, patchChat } from "./PlatformRecorder.ts"
import { fillText, pass, settled } from "./ShareHelpers.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)
const NEWS = channelId(1, CHANNEL_INDEX.news)

for (const kind of dbKinds) {
  const recorder = makeRecorder()
  const signer = recorder.signers.get(BOT1_ID)!
  layer(TestApp.layer({ capabilities: { db: kind }, patchChat: patchChat(recorder) }), { excludeTestServices: true })(`a summary's nonce, on ${kind}`, (it) => {
    it.effect("a share job run again after its posts (the worker killed before recording them): one summary per channel", () =>
      Effect.gen(function*() {
        yield* waitForKeys(signer)
        const formId = yield* createForm({ title: "Nonce", steps: [{ type: "message", string: "Idea?", char_limit: [1, 100] }], fwd_channel_ids: [FWD, NEWS] })
        const id = yield* fillText(bob, formId, ["Again"], signer)
        yield* pass(id)
        const first = yield* settled(id)
        const summaries = () => recorder.messages.filter((m) => m.body.nonce === summaryNonce(id, FWD) || m.body.nonce === summaryNonce(id, NEWS))
        assert.strictEqual(summaries().length, 2)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL WHERE submission_id = ${id} AND kind = 'summary'`
        const posts = recorder.posts
        yield* (yield* makeShareJobs).share(id)
        assert.strictEqual(recorder.posts, posts + 2, "posted again, each with its nonce")
        assert.strictEqual(summaries().length, 2)
        const again = (yield* (yield* SubmissionsRepo).get(id))!
        for (const channel of [FWD, NEWS]) {
          const before = first.effects.find((e) => e.kind === "summary" && e.target === channel)!
          assert.deepInclude(again.effects.find((e) => e.kind === "summary" && e.target === channel), { state: "done", message_id: before.message_id })
          assert.strictEqual(recorder.messages.find((m) => m.id === before.message_id)?.channelId, channel)
        }
      }))
  })
}
