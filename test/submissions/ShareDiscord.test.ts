/**
 * Discord share mode (forms-runtime.md §5) through the runtime against the sandbox's platform: a
 * Pass posts the public summary in every forwarding channel — the exact body the sandbox received,
 * each flag on and off (anonymize, highlight_attachments, public mentions, disable_upvote,
 * disable_downvote), a Private answer in none; a channel that refuses keeps its reason; a Drop
 * shares nothing; the job run again posts nothing twice.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CHANNEL_INDEX, channelId, roleId } from "../../src/sandbox/seed/Ids.ts"
import { makeShareJobs, shareJobId, ShareQueue, summaryNonce } from "../../src/layers/submissions/ShareJobs.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { makeReviewDecision } from "../../src/layers/submissions/ReviewDecision.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, carol, createForm, mod } from "./FlowHelpers.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { channelFault, channelMessages, fillText, pass, reviewPosted, settled } from "./ShareHelpers.ts"
import { sandboxSigner } from "./InteractionSigner.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)
const NEWS = channelId(1, CHANNEL_INDEX.news)
const PUBLIC = roleId(1, 2)
const SECRET = "secret-7f3a@example.com"
const msg = (string: string, taskboard_mapping: string, alias = "") => ({ type: "message", string, char_limit: [1, 200], alias, taskboard_mapping })
const STEPS = [
  msg("What should we call it?", "Title"),
  msg("Describe it", "Description", "Why"),
  msg("Your email", "Private", "Email"),
  msg("Screenshot", "Attachment", "Shot"),
  msg("Anything else?", "")
]
const ANSWERS = ["Dark mode", "Eyes hurt at night", SECRET, "https://cdn.example/a.png", "Thanks"]
const FIELDS = [
  { name: "What should we call it?", value: "Dark mode", inline: false },
  { name: "Describe it", value: "Eyes hurt at night", inline: false },
  { name: "Screenshot", value: "https://cdn.example/a.png", inline: false },
  { name: "Anything else?", value: "Thanks", inline: false }
]
const votes = (id: string, up: boolean, down: boolean) => {
  const buttons = [
    ...(up ? [{ type: 2, style: 2, label: "▲ 0", custom_id: `share:vote:up:${id}` }] : []),
    ...(down ? [{ type: 2, style: 2, label: "▼ 0", custom_id: `share:vote:down:${id}` }] : [])
  ]
  return buttons.length === 0 ? [] : [{ type: 1, components: buttons }]
}

/** The summary of submission `id` in `channel`, once posted. */
const summaryIn = (channel: string, id: string) =>
  Effect.gen(function*() {
    return (yield* channelMessages(channel)).filter((m) => m.body["nonce"] === summaryNonce(id, channel))
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`Discord share mode, on ${kind}`, (it) => {
    it.effect("each flag on and off: the exact summary in every forwarding channel, a Private answer in none", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const cases = [
          { flags: {}, author: true, extra: [], up: true, down: true, mentions: [PUBLIC] },
          { flags: { anonymize: true }, author: false, extra: [], up: true, down: true, mentions: [PUBLIC] },
          { flags: { highlight_attachments: true }, author: true, extra: [{ name: "Attachments", value: "[Shot](https://cdn.example/a.png)", inline: false }], up: true, down: true, mentions: [PUBLIC] },
          { flags: { disable_upvote: true }, author: true, extra: [], up: false, down: true, mentions: [] },
          { flags: { disable_downvote: true }, author: true, extra: [], up: true, down: false, mentions: [PUBLIC] },
          { flags: { disable_upvote: true, disable_downvote: true, anonymize: true, highlight_attachments: true }, author: false, extra: [{ name: "Attachments", value: "[Shot](https://cdn.example/a.png)", inline: false }], up: false, down: false, mentions: [] }
        ]
        for (const [n, c] of cases.entries()) {
          const title = `Share ${kind} ${n}`
          const formId = yield* createForm({ title, steps: STEPS, fwd_channel_ids: [FWD, NEWS], public_mentions: c.mentions, ...c.flags })
          const id = yield* fillText(bob, formId, ANSWERS)
          yield* pass(id, "medium")
          const s = yield* settled(id)
          for (const channel of [FWD, NEWS]) {
            const effect = s.effects.find((e) => e.kind === "summary" && e.target === channel)
            assert.deepInclude(effect, { state: "done", reason: null, channel_id: channel }, title)
            const posted = (yield* channelMessages(channel)).filter((m) => m.id === effect?.message_id)
            assert.strictEqual(posted.length, 1, title)
            assert.deepStrictEqual(posted[0]!.body, {
              content: c.mentions.map((r) => `<@&${r}>`).join(" "),
              allowed_mentions: { parse: [], roles: c.mentions },
              embeds: [{ title, color: 0x3366ff, ...(c.author ? { author: { name: "bob" } } : {}), fields: [...FIELDS, ...c.extra] }],
              components: votes(id, c.up, c.down),
              nonce: summaryNonce(id, channel),
              enforce_nonce: true
            }, title)
            assert.notInclude(JSON.stringify(posted[0]!.body), SECRET)
            if (!c.author) assert.notInclude(JSON.stringify(posted[0]!.body), bob.userId)
          }
        }
      }))

    it.effect("a channel that refuses (403, 404): that summary failed with its reason; a 5xx then success: posted once; a Drop shares nothing", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const [text, text2] = [channelId(1, CHANNEL_INDEX.text), FWD]
        const formId = yield* createForm({ title: "Refusals", steps: STEPS, fwd_channel_ids: [text, NEWS, text2] })
        const id = yield* fillText(carol, formId, ANSWERS)
        yield* reviewPosted(id)
        yield* channelFault(text, "403")
        yield* channelFault(NEWS, "404")
        yield* channelFault(text2, "500")
        yield* pass(id)
        const s = yield* settled(id)
        const byChannel = new Map(s.effects.filter((e) => e.kind === "summary").map((e) => [e.target, e]))
        assert.deepInclude(byChannel.get(text), { state: "failed", reason: `The platform refused the summary in channel ${text} (403 50001): Missing Access`, message_id: null })
        assert.deepInclude(byChannel.get(NEWS), { state: "failed", reason: `The platform refused the summary in channel ${NEWS} (404 10003): Unknown Channel`, message_id: null })
        assert.strictEqual(byChannel.get(text2)?.state, "done")
        assert.strictEqual((yield* summaryIn(text2, id)).length, 1)
        assert.strictEqual((yield* summaryIn(text, id)).length, 0)
        // One share job, by the submission's id (whoever decides it sends that one).
        assert.isTrue(Option.isSome(yield* (yield* JobEngine).job(ShareQueue, shareJobId(id))))

        const dropped = yield* createForm({ title: "Dropped", steps: STEPS, fwd_channel_ids: [FWD] })
        const other = yield* fillText(mod, dropped, ANSWERS)
        const decide = yield* makeReviewDecision
        yield* decide(other, { decision: "drop", priority: null, reason: null, reviewerId: mod.userId, reviewerName: "mod", reviewerAvatar: null }, { editMessage: true })
        yield* Effect.sleep("1 second")
        const after = yield* (yield* SubmissionsRepo).get(other)
        assert.deepStrictEqual(after!.effects.filter((e) => e.kind === "summary" || e.kind === "card"), [])
        assert.strictEqual((yield* summaryIn(FWD, other)).length, 0)
      }))

    it.effect("the share job run again once its summaries are recorded posts nothing twice", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const formId = yield* createForm({ title: "Again", steps: STEPS, fwd_channel_ids: [FWD] })
        const id = yield* fillText(bob, formId, ANSWERS)
        yield* pass(id)
        yield* settled(id)
        const before = (yield* channelMessages(FWD)).length
        const jobs = yield* makeShareJobs
        yield* jobs.share(id)
        yield* jobs.share(id)
        assert.strictEqual((yield* channelMessages(FWD)).length, before)
      }))
  })
}
