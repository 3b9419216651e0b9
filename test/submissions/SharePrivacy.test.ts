/**
 * A Private-mapped answer reaches neither a channel nor the board: for every combination of the
 * share flags, in both modes, with every priority, its text is in no byte of the summary or the card.
 */
import { describe, expect, it } from "vitest"
import { cardPlan, summaryMessage } from "../../src/services/submissions/Share.ts"
import { input, SECRET, SECRET_URL } from "./ShareFixtures.ts"

const FLAGS = ["taskboard_integration", "anonymize", "highlight_attachments", "extended_embed", "disable_upvote", "disable_downvote"] as const

describe("Private answers are shared nowhere", () => {
  it("in all 64 combinations of the flags (with mentions), neither the summary nor the card holds them", () => {
    for (let bits = 0; bits < 1 << FLAGS.length; bits++) {
      const form = Object.fromEntries(FLAGS.map((flag, i) => [flag, (bits & (1 << i)) !== 0]))
      const shared = Buffer.from(JSON.stringify([summaryMessage(input({ ...form, public_mentions: ["1"] })), cardPlan(input(form))]))
      for (const secret of [SECRET, SECRET_URL, "Your email", "Proof"]) {
        expect(shared.includes(Buffer.from(secret)), `${secret} with ${JSON.stringify(form)}`).toBe(false)
      }
      // The non-private answers are there: the check looks at real output.
      expect(shared.includes(Buffer.from("Dark mode"))).toBe(true)
    }
  })
  it("a Private answer that looks like every other mapping's (a title, a URL, a label) is still left out", () => {
    const steps = [
      { step_id: "p", string: "Private", alias: "P", taskboard_mapping: "Private" as const },
      { step_id: "t", string: "Title", alias: "", taskboard_mapping: "Title" as const }
    ]
    const answers = { p: ["https://private.example/x", "Label-ish"], t: "Shown" }
    const shared = JSON.stringify([summaryMessage(input({ steps, highlight_attachments: true }, { answers })), cardPlan(input({ steps }, { answers }))])
    expect(shared).not.toContain("private.example")
    expect(shared).not.toContain("Label-ish")
    expect(shared).toContain("Shown")
  })
  it("anonymize: the member's name, id and avatar are in no summary, in either mode", () => {
    for (const taskboard_integration of [false, true]) {
      const shared = JSON.stringify(summaryMessage(input({ anonymize: true, extended_embed: true, taskboard_integration })))
      for (const trace of ["Alice", "100000000000000001", "avatar.png"]) expect(shared, trace).not.toContain(trace)
      expect(shared).toContain("Dark mode")
    }
    expect(JSON.stringify(summaryMessage(input()))).toContain("Alice")
  })
})
