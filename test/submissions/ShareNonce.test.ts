/**
 * A summary posted, then its worker killed before recording it (forms-runtime.md §5, delivery.md
 * §4): the job run again posts with the same `nonce` and `enforce_nonce`, so the platform answers
 * with the first message — one summary per channel, its id recorded. The platform is the sandbox's,
 * which keeps each bot's nonces as Discord does: the posts are counted by `GET /sandbox/stats`, the
 * summaries read back from its channels.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { makeShareJobs, summaryNonce } from "../../src/layers/submissions/ShareJobs.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, createForm } from "./FlowHelpers.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner } from "./InteractionSigner.ts"
import { callsTo, eventuallyEffect } from "./PlayerFixtures.ts"
import { channelMessages, fillText, pass, settled } from "./ShareHelpers.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)
const NEWS = channelId(1, CHANNEL_INDEX.news)

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`a summary's nonce, on ${kind}`, (it) => {
    it.effect("a share job run again after its posts (the worker killed before recording them): one summary per channel", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const formId = yield* createForm({ title: "Nonce", steps: [{ type: "message", string: "Idea?", char_limit: [1, 100] }], fwd_channel_ids: [FWD, NEWS] })
        const id = yield* fillText(bob, formId, ["Again"])
        yield* pass(id)
        const first = yield* settled(id)
        // The Pass's DM is a post too: sent before the posts are counted.
        const repo = yield* SubmissionsRepo
        yield* eventuallyEffect(Effect.map(repo.get(id), (s) => (s?.dm != null ? s : undefined)))
        const summaries = (channel: string) =>
          Effect.map(channelMessages(channel), (ms) => ms.filter((m) => m.body["nonce"] === summaryNonce(id, channel)))
        for (const channel of [FWD, NEWS]) assert.strictEqual((yield* summaries(channel)).length, 1, channel)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL WHERE submission_id = ${id} AND kind = 'summary'`
        const posts = yield* callsTo("POST /channels/{id}/messages")
        yield* (yield* makeShareJobs).share(id)
        assert.strictEqual(yield* callsTo("POST /channels/{id}/messages"), posts + 2, "posted again, each with its nonce")
        const again = (yield* repo.get(id))!
        for (const channel of [FWD, NEWS]) {
          const before = first.effects.find((e) => e.kind === "summary" && e.target === channel)!
          assert.deepInclude(again.effects.find((e) => e.kind === "summary" && e.target === channel), { state: "done", message_id: before.message_id })
          // Still the one summary in that channel: the first message, answered again.
          assert.deepStrictEqual((yield* summaries(channel)).map((m) => m.id), [before.message_id], channel)
        }
      }))
  })
}
