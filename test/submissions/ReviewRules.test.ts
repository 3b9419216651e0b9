/** Who may review, what a Pass carries, and what the review message and the DM say (forms-runtime.md §4). */
import { describe, expect, it } from "@effect/vitest"
import type { StoredForm } from "../../src/domain/forms/Form.ts"
import { fairCap, reviewButtons, reviewMessage, submissionText } from "../../src/services/submissions/ReviewMessage.ts"
import { decidedLine, decisionDm, mayReview, passPriority } from "../../src/services/submissions/ReviewRules.ts"

interface Embed {
  readonly author: unknown
  readonly fields: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

const MOD = "320000000000000101"
const form = (over: Partial<StoredForm> = {}): StoredForm => ({
  workflow_id: 7,
  timestamp_created: "2026-01-01T00:00:00Z",
  channel_id: "310000000000000102",
  fwd_channel_ids: [],
  role_mentions: [MOD],
  public_mentions: [],
  workflow_live: true,
  taskboard_integration: false,
  anonymize: false,
  disable_downvote: false,
  disable_upvote: false,
  extended_embed: false,
  taskboard_board: "0",
  title: "Apply",
  color_hex: "#3366ff",
  highlight_attachments: false,
  anonymize_rejection: false,
  disable_mentions: false,
  disable_priorities: false,
  steps: [
    { step_id: 1, type: "message", string: "Name?", answers_validation: [], char_limit: [1, 2000], alias: "", taskboard_mapping: "" },
    { step_id: 2, type: "message", string: "Secret?", answers_validation: [], char_limit: [1, 2000], alias: "Code", taskboard_mapping: "Private" }
  ],
  ...over
})

describe("mayReview", () => {
  const member = (roles: ReadonlyArray<string>, permissions = "0") => ({ roles, permissions })
  it("a role of role_mentions, or the forms module's managers (ADMINISTRATOR, MANAGE_GUILD)", () => {
    expect(mayReview(member([MOD]), form())).toBe(true)
    expect(mayReview(member(["1", MOD]), form())).toBe(true)
    expect(mayReview(member(["1"]), form())).toBe(false)
    expect(mayReview(member([]), form())).toBe(false)
    expect(mayReview(member([], String(1n << 3n)), form())).toBe(true)
    expect(mayReview(member([], String(1n << 5n)), form())).toBe(true)
    expect(mayReview(member([], String((1n << 51n) - 1n)), form())).toBe(true)
    // Other bits (MANAGE_WEBHOOKS, VIEW_AUDIT_LOG, MANAGE_ROLES) are not enough.
    expect(mayReview(member([], String((1n << 29n) | (1n << 7n) | (1n << 28n) | (1n << 4n) | (1n << 6n))), form())).toBe(false)
    expect(mayReview(member([MOD]), form({ role_mentions: [] }))).toBe(false)
    expect(mayReview(member([], "not-a-number"), form())).toBe(false)
    expect(mayReview(member([], ""), form())).toBe(false)
    // Only digits: a bit set with anything around it is no permission.
    expect(mayReview(member([], "x8"), form())).toBe(false)
    expect(mayReview(member([], "8x"), form())).toBe(false)
  })
})

describe("passPriority", () => {
  it("one of three priorities, or none with disable_priorities", () => {
    for (const p of ["low", "medium", "high"]) expect(passPriority(form(), p)).toBe(p)
    expect(passPriority(form(), undefined)).toBeUndefined()
    expect(passPriority(form(), "urgent")).toBeUndefined()
    expect(passPriority(form({ disable_priorities: true }), undefined)).toBeNull()
    expect(passPriority(form({ disable_priorities: true }), "high")).toBeUndefined()
  })
})

describe("decidedLine and decisionDm", () => {
  it("say who decided, with the priority", () => {
    expect(decidedLine("pass", "Mo", "low")).toBe("Passed by Mo — priority low")
    expect(decidedLine("pass", "Mo", null)).toBe("Passed by Mo")
    expect(decidedLine("drop", "Mo", null)).toBe("Dropped by Mo")
  })
  it("the DM: accepted; denied with the reason and the reviewer unless anonymized", () => {
    const base = { formTitle: "Apply", serverName: "S", reason: "Full", reviewerName: "Mo", anonymize: false }
    expect(decisionDm({ ...base, decision: "pass" })).toBe("Apply on S: accepted")
    expect(decisionDm({ ...base, decision: "drop" })).toBe("Apply on S: denied\nReason: Full\nReviewed by Mo")
    expect(decisionDm({ ...base, decision: "drop", anonymize: true })).toBe("Apply on S: denied\nReason: Full")
    expect(decisionDm({ ...base, decision: "drop", reason: null })).toBe("Apply on S: denied\nReviewed by Mo")
    expect(decisionDm({ ...base, decision: "drop", reason: "" })).toBe("Apply on S: denied\nReviewed by Mo")
  })
})

describe("reviewMessage", () => {
  const input = (over: Partial<StoredForm> = {}, answers: Record<string, string> = { "1": "Bob", "2": "1234" }) =>
    ({ id: "42", form: form(over), answers, userId: "100", userName: "bob", userAvatar: "abc" })

  it("mentions exactly the form's roles, and lets only them ping", () => {
    const { body } = reviewMessage(input())
    expect(body.content).toBe(`<@&${MOD}>`)
    expect(body.allowed_mentions).toEqual({ parse: [], roles: [MOD] })
    const quiet = reviewMessage(input({ disable_mentions: true })).body
    expect(quiet.content).toBeUndefined()
    expect(quiet.allowed_mentions).toEqual({ parse: [], roles: [] })
  })

  it("an embed: title, colour, the member, a field a step (Private marked), the submission's id", () => {
    const embed = (reviewMessage(input()).body.embeds as ReadonlyArray<Embed>)[0]
    expect(embed).toEqual({
      title: "Apply",
      color: 0x3366ff,
      author: { name: "bob", icon_url: "https://cdn.discordapp.com/avatars/100/abc.png" },
      fields: [{ name: "Name?", value: "Bob", inline: false }, { name: "Code (private)", value: "1234", inline: false }],
      footer: { text: "Submission 42" }
    })
    expect((reviewMessage({ ...input(), userAvatar: null }).body.embeds as ReadonlyArray<Embed>)[0]!.author).toEqual({ name: "bob" })
  })

  it("cuts answers to 1,024 with …, and within the embed's 6,000 in all; says when it cut", () => {
    const one = reviewMessage(input({}, { "1": "x".repeat(1500), "2": "y" }))
    expect(one.cut).toBe(true)
    const fields = (one.body.embeds as ReadonlyArray<Embed>)[0]!.fields
    expect([...fields[0]!.value].length).toBe(1024)
    expect(fields[0]!.value.endsWith("…")).toBe(true)
    expect(reviewMessage(input()).cut).toBe(false)
    const many = form({ steps: Array.from({ length: 10 }, (_, i) => ({ ...form().steps[0]!, step_id: i + 1 })) })
    const big = reviewMessage({ ...input(), form: many, answers: Object.fromEntries(many.steps.map((s) => [String(s.step_id), "z".repeat(1000)])) })
    const e = (big.body.embeds as ReadonlyArray<Embed>)[0]!
    // What the platform counts: title, field names and values, footer, author name.
    const counted = "Apply".length + "Submission 42".length + "bob".length + e.fields.reduce((n, f) => n + [...f.name].length + [...f.value].length, 0)
    expect(big.cut).toBe(true)
    expect(counted).toBeLessThanOrEqual(6000)
    expect(counted).toBeGreaterThan(5900)
  })

  /** What the platform counts of an embed: title, author name, field names and values, footer. */
  const counted = (e: Embed & { readonly title: string; readonly footer: { readonly text: string } }) =>
    [...e.title].length + [...e.footer.text].length + [...(e.author as { name: string }).name].length +
    e.fields.reduce((n, f) => n + [...f.name].length + [...f.value].length, 0)
  const steps = (n: number, over: Partial<StoredForm["steps"][number]> = {}) =>
    Array.from({ length: n }, (_, i) => ({ ...form().steps[0]!, step_id: i + 1, ...over }))

  it("a long answer among short ones keeps its 1,024: short answers leave it their room", () => {
    const ten = form({ steps: steps(10) })
    const answers = { ...Object.fromEntries(ten.steps.map((s) => [String(s.step_id), "short"])), "4": "l".repeat(1500) }
    const e = (reviewMessage({ ...input(), form: ten, answers }).body.embeds as ReadonlyArray<Embed>)[0]!
    expect([...e.fields[3]!.value].length).toBe(1024)
    expect(e.fields.filter((f) => f.value === "short")).toHaveLength(9)
  })

  it("25 steps with long questions, Private-mapped: every name marked, the whole embed within 6,000", () => {
    const long = form({ steps: steps(25, { string: "q".repeat(400), taskboard_mapping: "Private" }) })
    const answers = Object.fromEntries(long.steps.map((s) => [String(s.step_id), "a".repeat(1024)]))
    const message = reviewMessage({ ...input(), form: long, answers })
    const e = (message.body.embeds as ReadonlyArray<Embed & { title: string; footer: { text: string } }>)[0]!
    expect(e.fields).toHaveLength(25)
    for (const f of e.fields) {
      expect(f.name.endsWith("… (private)")).toBe(true)
      expect([...f.name].length).toBeLessThanOrEqual(256)
      // Names and answers share the embed: neither is cut to nothing.
      expect([...f.name].length).toBeGreaterThan(100)
      expect([...f.value].length).toBeGreaterThan(100)
    }
    expect(counted(e)).toBeLessThanOrEqual(6000)
    expect(counted(e)).toBeGreaterThan(5950)
    expect(message.cut).toBe(true)
    // A single Private step whose alias alone fills a name: the mark is kept, the alias cut.
    const one = form({ steps: [{ ...form().steps[1]!, alias: "c".repeat(300) }] })
    const name = (reviewMessage({ ...input(), form: one }).body.embeds as ReadonlyArray<Embed>)[0]!.fields[0]!.name
    expect([...name].length).toBe(256)
    expect(name.endsWith("… (private)")).toBe(true)
  })

  it("an unanswered step shows —, and is no cut; the buttons ride on the message; two roles, one space apart", () => {
    const message = reviewMessage(input({ role_mentions: [MOD, "320000000000000102"] }, { "1": "Bob" }))
    const e = (message.body.embeds as ReadonlyArray<Embed>)[0]!
    expect(e.fields.map((f) => f.value)).toEqual(["Bob", "—"])
    expect(message.cut).toBe(false)
    expect(message.body.content).toBe(`<@&${MOD}> <@&320000000000000102>`)
    expect(message.body.components).toEqual([reviewButtons("42", form())])
    // An empty answer stored as "" too.
    expect((reviewMessage(input({}, { "1": "", "2": "x" })).body.embeds as ReadonlyArray<Embed>)[0]!.fields[0]!.value).toBe("—")
  })

  it("25 long questions with short answers: the names keep what the answers leave", () => {
    const long = form({ steps: steps(25, { string: "q".repeat(400) }) })
    const answers = Object.fromEntries(long.steps.map((s) => [String(s.step_id), "a".repeat(100)]))
    const e = (reviewMessage({ ...input(), form: long, answers }).body.embeds as ReadonlyArray<Embed & { title: string; footer: { text: string } }>)[0]!
    // 6,000 less the title, author and footer, less 25 × 100 for the answers: ~138 a name.
    for (const f of e.fields) {
      expect(f.value).toBe("a".repeat(100))
      expect([...f.name].length).toBeGreaterThan(130)
    }
    expect(counted(e)).toBeLessThanOrEqual(6000)
    // A long answer among them is cut only to what its share allows, and the whole to 6,000.
    const mixed = { ...answers, "3": "b".repeat(2000) }
    const m = (reviewMessage({ ...input(), form: long, answers: mixed }).body.embeds as ReadonlyArray<Embed & { title: string; footer: { text: string } }>)[0]!
    expect(counted(m)).toBeLessThanOrEqual(6000)
    expect([...m.fields[2]!.value].length).toBeGreaterThan(100)
  })

  it("fairCap: the largest cap the budget allows, short texts kept whole", () => {
    expect(fairCap([10, 20, 30], 60)).toBe(Infinity)
    expect(fairCap([10, 20, 30], 59)).toBe(29)
    expect(fairCap([10, 1000, 1000], 1010)).toBe(500)
    expect(fairCap([100, 100], 50)).toBe(25)
    expect(fairCap([5, 5], 1)).toBe(1)
  })

  it("buttons: Pass — low/medium/high and Drop; Pass and Drop with disable_priorities", () => {
    const labels = (b: ReturnType<typeof reviewButtons>) => b.components.map((c) => [c.label, c.custom_id])
    expect(labels(reviewButtons("42", form()))).toEqual([
      ["Pass — low", "r:pass:42:low"], ["Pass — medium", "r:pass:42:medium"], ["Pass — high", "r:pass:42:high"], ["Drop", "r:drop:42"]
    ])
    expect(labels(reviewButtons("42", form({ disable_priorities: true })))).toEqual([["Pass", "r:pass:42"], ["Drop", "r:drop:42"]])
  })

  it("the whole submission as text: a heading a step (alias, else the question), its whole answer", () => {
    expect(submissionText(input({}, { "1": "Bob" }))).toBe("Apply — submission 42 by bob\n\n## Name?\nBob\n\n## Code\n\n")
  })
})
