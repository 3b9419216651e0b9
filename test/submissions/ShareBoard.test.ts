/**
 * Task-board share mode (forms-runtime.md §5) through the runtime against the sandbox's task-board
 * twin and platform: the card the twin holds (name, `{Alias}: {Text}` lines, the list found or
 * created by name or the board's first open list, labels by name and `Priority: <p>`, URL
 * attachments; no Private answer), the card's URL on the submission, and the summary — title and
 * card link, or the whole of it with `extended_embed` — each flag on and off.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { summaryNonce } from "../../src/layers/submissions/ShareJobs.ts"
import type { Submission } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, createForm } from "./FlowHelpers.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { BOARD_ANSWERS, BOARD_STEPS, ROADMAP, SECRET } from "./ShareBoardFixtures.ts"
import { channelMessages, fillText, pass, settled, twinBoard, twinCards } from "./ShareHelpers.ts"
import { sandboxSigner } from "./InteractionSigner.ts"
import type { TwinCard } from "./ShareHelpers.ts"

const FWD = channelId(1, CHANNEL_INDEX.text2)
const BUG = "5f1a0000000000000000d001"
const TODO = "5f1a0000000000000000c001"
const FIELDS = [
  { name: "What should we call it?", value: "Dark mode", inline: false },
  { name: "Describe it", value: "Eyes hurt at night", inline: false },
  { name: "Which area?", value: "Backlog", inline: false },
  { name: "Tags", value: "Bug", inline: false },
  { name: "Screenshot", value: "https://cdn.example/a.png", inline: false },
  { name: "How did you hear?", value: "A friend", inline: false }
]

const cardOf = (s: Submission) =>
  Effect.map(twinCards(ROADMAP), (cards) => cards.filter((c) => c.id === s.effects.find((e) => e.kind === "card")?.message_id))

const summaryOf = (s: Submission) =>
  Effect.map(channelMessages(FWD), (ms) => ms.filter((m) => m.id === s.effects.find((e) => e.kind === "summary")?.message_id))

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`task-board share mode, on ${kind}`, (it) => {
    it.effect("each flag on and off: the card the twin holds, the card's URL kept, the summary short or extended; no Private answer anywhere", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const cases = [
          { flags: {}, extended: false, author: false, extra: [], up: true, down: true },
          { flags: { extended_embed: true }, extended: true, author: true, extra: [], up: true, down: true },
          { flags: { extended_embed: true, anonymize: true, highlight_attachments: true }, extended: true, author: false, extra: [{ name: "Attachments", value: "[Shot](https://cdn.example/a.png)", inline: false }], up: true, down: true },
          { flags: { anonymize: true, highlight_attachments: true, disable_upvote: true }, extended: false, author: false, extra: [], up: false, down: true },
          { flags: { extended_embed: true, disable_downvote: true }, extended: true, author: true, extra: [], up: true, down: false }
        ]
        const cards: Array<TwinCard> = []
        for (const [n, c] of cases.entries()) {
          const title = `Board ${kind} ${n}`
          const formId = yield* createForm({ title, steps: BOARD_STEPS, fwd_channel_ids: [FWD], taskboard_integration: true, taskboard_board: ROADMAP, ...c.flags })
          const id = yield* fillText(bob, formId, BOARD_ANSWERS)
          yield* pass(id, "high")
          const s = yield* settled(id)
          const [card, ...more] = yield* cardOf(s)
          assert.strictEqual(more.length, 0)
          const board = (yield* twinBoard(ROADMAP))!
          const backlog = board.lists.filter((l) => l.name === "Backlog")
          const priority = board.labels.filter((l) => l.name === "Priority: high")
          assert.strictEqual(backlog.length, 1, "the list is created once, then found by name")
          assert.strictEqual(priority.length, 1, "the label is created once, then found by name")
          assert.deepInclude(card, { name: "Dark mode", idList: backlog[0]!.id, idLabels: [BUG, priority[0]!.id], attachments: [{ url: "https://cdn.example/a.png", name: "https://cdn.example/a.png" }] })
          assert.match(card!.desc, /^Why: Eyes hurt at night\nHow did you hear\?: A friend\n\n\[ref gw-[A-Za-z0-9_-]{12}\]$/)
          assert.strictEqual(s.cardUrl, card!.url)
          assert.deepInclude(s.effects.find((e) => e.kind === "card"), { state: "done", reason: null, target: ROADMAP })
          const [summary] = yield* summaryOf(s)
          const link = { url: card!.url, description: `[View the card](${card!.url})` }
          assert.deepStrictEqual(summary!.body, {
            content: "",
            allowed_mentions: { parse: [], roles: [] },
            embeds: [{ title, color: 0x3366ff, ...link, ...(c.author ? { author: { name: "bob" } } : {}), fields: c.extended ? [...FIELDS, ...c.extra] : [] }],
            components: [{ type: 1, components: [
              ...(c.up ? [{ type: 2, style: 2, label: "▲ 0", custom_id: `share:vote:up:${id}` }] : []),
              ...(c.down ? [{ type: 2, style: 2, label: "▼ 0", custom_id: `share:vote:down:${id}` }] : [])
            ] }],
            nonce: summaryNonce(id, FWD),
            enforce_nonce: true
          }, title)
          cards.push(card!)
        }
        // Nothing Private reached the board or a channel.
        assert.notInclude(JSON.stringify(yield* twinCards(ROADMAP)), SECRET)
        assert.notInclude(JSON.stringify(yield* channelMessages(FWD)), SECRET)
        assert.strictEqual(new Set(cards.map((c) => c.id)).size, cases.length)
      }))

    it.effect("no List step: the board's first open list; no Label step and no priority: no labels; no Description: the marker alone", () =>
      Effect.gen(function*() {
        yield* waitForKeys(sandboxSigner)
        const steps = [{ type: "message", string: "Name it", char_limit: [1, 100], taskboard_mapping: "Title" }]
        const formId = yield* createForm({ title: `Bare ${kind}`, steps, fwd_channel_ids: [FWD], taskboard_integration: true, taskboard_board: ROADMAP })
        const id = yield* fillText(bob, formId, ["Plain card"])
        yield* pass(id, null)
        const s = yield* settled(id)
        const [card] = yield* cardOf(s)
        assert.deepInclude(card, { name: "Plain card", idList: TODO, idLabels: [], attachments: [] })
        assert.match(card!.desc, /^\[ref gw-[A-Za-z0-9_-]{12}\]$/)
      }))
  })
}
