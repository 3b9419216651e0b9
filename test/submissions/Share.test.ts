/**
 * The share rules (forms-runtime.md §5), table-driven: the summary with each flag on and off in both
 * share modes, the card from each mapping, and Discord's and Trello's limits. The privacy of
 * Private-mapped answers has its own file (SharePrivacy.test.ts).
 */
import { describe, expect, it } from "vitest"
import { cardPlan, parseVoteCustomId, summaryMessage, voteCustomId } from "../../src/services/submissions/Share.ts"
import { CARD_URL, input } from "./ShareFixtures.ts"

const ALL_FIELDS = [
  { name: "What should we call it?", value: "Dark mode", inline: false },
  { name: "Describe it", value: "Eyes hurt at night", inline: false },
  { name: "Which area?", value: "Backlog", inline: false },
  { name: "Tags", value: "UI, Accessibility", inline: false },
  { name: "Screenshot", value: "https://cdn.example/a.png see https://cdn.example/b.png", inline: false },
  { name: "Anything else?", value: "Thanks", inline: false },
  { name: "How did you hear?", value: "A friend", inline: false }
]
const AUTHOR = { name: "Alice", icon_url: "https://cdn.example/avatar.png" }
const UP = { type: 2, style: 2, label: "▲ 3", custom_id: "share:vote:up:sub-1" }
const DOWN = { type: 2, style: 2, label: "▼ 1", custom_id: "share:vote:down:sub-1" }
const ATTACHMENTS = { name: "Attachments", value: "[Shot](https://cdn.example/a.png)\n[Shot](https://cdn.example/b.png)", inline: false }

describe("the public summary, Discord share mode", () => {
  it("defaults: every answer that is not Private, the author, both vote buttons, no mentions", () => {
    expect(summaryMessage(input())).toStrictEqual({
      content: "",
      allowed_mentions: { parse: [], roles: [] },
      embeds: [{ title: "Feature requests", color: 0x00d084, author: AUTHOR, fields: ALL_FIELDS }],
      components: [{ type: 1, components: [UP, DOWN] }]
    })
  })

  it.each([
    ["anonymize on: no author", { anonymize: true }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]).not.toHaveProperty("author")],
    ["anonymize off: the member", { anonymize: false }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.author).toStrictEqual(AUTHOR)],
    ["highlight_attachments on: one more field, links", { highlight_attachments: true }, (m: ReturnType<typeof summaryMessage>) =>
      expect(m.embeds[0]?.fields).toStrictEqual([...ALL_FIELDS, ATTACHMENTS])],
    ["highlight_attachments off: none", { highlight_attachments: false }, (m: ReturnType<typeof summaryMessage>) =>
      expect(m.embeds[0]?.fields).toStrictEqual(ALL_FIELDS)],
    ["disable_upvote: only ▼", { disable_upvote: true }, (m: ReturnType<typeof summaryMessage>) =>
      expect(m.components).toStrictEqual([{ type: 1, components: [DOWN] }])],
    ["disable_downvote: only ▲", { disable_downvote: true }, (m: ReturnType<typeof summaryMessage>) =>
      expect(m.components).toStrictEqual([{ type: 1, components: [UP] }])],
    ["both disabled: no buttons at all", { disable_upvote: true, disable_downvote: true }, (m: ReturnType<typeof summaryMessage>) =>
      expect(m.components).toStrictEqual([])],
    ["public_mentions: mentioned, and allowed_mentions names exactly them", { public_mentions: ["200000000000000001", "200000000000000002"] },
      (m: ReturnType<typeof summaryMessage>) => {
        expect(m.content).toBe("<@&200000000000000001> <@&200000000000000002>")
        expect(m.allowed_mentions).toStrictEqual({ parse: [], roles: ["200000000000000001", "200000000000000002"] })
      }],
    ["extended_embed has no effect without the task board", { extended_embed: true }, (m: ReturnType<typeof summaryMessage>) => {
      expect(m.embeds[0]?.fields).toStrictEqual(ALL_FIELDS)
      expect(m.embeds[0]).not.toHaveProperty("url")
      expect(m.embeds[0]).not.toHaveProperty("description")
    }],
    ["color_hex is the embed's colour", { color_hex: "#FF0010" }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.color).toBe(0xff0010)],
    ["a colour that is not #rrggbb is 0", { color_hex: "ff0010" }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.color).toBe(0)],
    ["a colour with a tail is 0", { color_hex: "#ff0010x" }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.color).toBe(0)],
    ["a colour with a head is 0", { color_hex: "x#ff0010" }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.color).toBe(0)],
    ["a colour that is not hex is 0", { color_hex: "#ff00g0" }, (m: ReturnType<typeof summaryMessage>) => expect(m.embeds[0]?.color).toBe(0)]
  ])("%s", (_, form, check) => check(summaryMessage(input(form))))

  it("a member without an avatar: the author has no icon", () => {
    const m = summaryMessage(input({}, { member: { id: "1", name: "Bob", avatar_url: null } }))
    expect(m.embeds[0]?.author).toStrictEqual({ name: "Bob" })
  })

  it("the vote counts are the submission's", () => {
    const m = summaryMessage(input({}, { votes: { up: 0, down: 12 }, submission_id: "abc" }))
    expect(m.components[0]?.components.map((b) => [b.label, b.custom_id])).toStrictEqual([["▲ 0", "share:vote:up:abc"], ["▼ 12", "share:vote:down:abc"]])
  })

  it("unanswered and blank answers are left out; a select's choices are joined", () => {
    const m = summaryMessage(input({}, { answers: { s1: "T", s2: "   ", s4: ["a", " b "], s7: [] } }))
    expect(m.embeds[0]?.fields).toStrictEqual([
      { name: "What should we call it?", value: "T", inline: false },
      { name: "Tags", value: "a,  b", inline: false }
    ])
  })

  it("an Attachment answer without a URL is listed as its text; one without any answer adds no field", () => {
    const text = summaryMessage(input({ highlight_attachments: true }, { answers: { s5: "  scan.pdf  " } }))
    expect(text.embeds[0]?.fields).toStrictEqual([
      { name: "Screenshot", value: "scan.pdf", inline: false },
      { name: "Attachments", value: "scan.pdf", inline: false }
    ])
    const none = summaryMessage(input({ highlight_attachments: true }, { answers: { s1: "T" } }))
    expect(none.embeds[0]?.fields.map((f) => f.name)).toStrictEqual(["What should we call it?"])
  })

  it("a link in Attachments is named by the step's alias, or its question when the alias is blank", () => {
    const steps = [{ step_id: "a", string: "Upload", alias: "  ", taskboard_mapping: "Attachment" as const }]
    const m = summaryMessage(input({ highlight_attachments: true, steps }, { answers: { a: ["http://x.io/1", "ftp://x.io/2"] } }))
    expect(m.embeds[0]?.fields.at(-1)).toStrictEqual({ name: "Attachments", value: "[Upload](http://x.io/1)", inline: false })
  })
})

describe("the public summary, task-board mode", () => {
  const board = { taskboard_integration: true }
  it("without extended_embed: the title and the card link only (no author, no answers)", () => {
    expect(summaryMessage(input(board)).embeds).toStrictEqual([
      { title: "Feature requests", color: 0x00d084, url: CARD_URL, description: `[View the card](${CARD_URL})`, fields: [] }
    ])
  })
  it("with extended_embed: the whole summary plus the link", () => {
    expect(summaryMessage(input({ ...board, extended_embed: true })).embeds).toStrictEqual([
      { title: "Feature requests", color: 0x00d084, url: CARD_URL, description: `[View the card](${CARD_URL})`, author: AUTHOR, fields: ALL_FIELDS }
    ])
  })
  it("with extended_embed, anonymize and highlight_attachments apply", () => {
    const [embed] = summaryMessage(input({ ...board, extended_embed: true, anonymize: true, highlight_attachments: true })).embeds
    expect(embed).not.toHaveProperty("author")
    expect(embed?.fields).toStrictEqual([...ALL_FIELDS, ATTACHMENTS])
  })
  it("no card (yet): no link", () => {
    expect(summaryMessage(input(board, { card_url: null })).embeds).toStrictEqual([{ title: "Feature requests", color: 0x00d084, fields: [] }])
  })
  it("votes, mentions and their buttons are the same in both modes", () => {
    const m = summaryMessage(input({ ...board, disable_downvote: true, public_mentions: ["3"] }))
    expect([m.content, m.allowed_mentions.roles, m.components]).toStrictEqual(["<@&3>", ["3"], [{ type: 1, components: [UP] }]])
  })
})

describe("the card", () => {
  it("each mapping: Title → name, Description → `{Alias}: {Text}` lines, List, Labels + priority, Attachment URLs", () => {
    expect(cardPlan(input())).toStrictEqual({
      name: "Dark mode",
      desc: "Why: Eyes hurt at night\nHow did you hear?: A friend",
      list_name: "Backlog",
      label_names: ["UI", "Accessibility", "Priority: high"],
      attachment_urls: ["https://cdn.example/a.png", "https://cdn.example/b.png"]
    })
  })
  it("no Title answer: the form's title; no List answer: null (the board's first open list); no priority: no label", () => {
    expect(cardPlan(input({}, { answers: { s2: "x", s3: "  " }, priority: null }))).toStrictEqual({
      name: "Feature requests", desc: "Why: x", list_name: null, label_names: [], attachment_urls: []
    })
  })
  it("answers are trimmed; the first of several Title or List steps wins; labels and URLs are not repeated", () => {
    const steps = [
      { step_id: "t1", string: "A", alias: "", taskboard_mapping: "Title" as const },
      { step_id: "t2", string: "B", alias: "", taskboard_mapping: "Title" as const },
      { step_id: "l1", string: "C", alias: "", taskboard_mapping: "List" as const },
      { step_id: "l2", string: "D", alias: "", taskboard_mapping: "List" as const },
      { step_id: "g1", string: "E", alias: "", taskboard_mapping: "Label" as const },
      { step_id: "g2", string: "F", alias: "", taskboard_mapping: "Label" as const },
      { step_id: "u1", string: "G", alias: "", taskboard_mapping: "Attachment" as const },
      { step_id: "u2", string: "H", alias: "", taskboard_mapping: "Attachment" as const }
    ]
    const answers = { t1: " First ", t2: "Second", l1: " Later ", l2: "Now", g1: " Bug ", g2: ["Bug", "Priority: low", "", "  "], u1: "https://a.io/x", u2: "https://a.io/x\nHTTP://b.io/y" }
    expect(cardPlan(input({ steps }, { answers, priority: "low" }))).toStrictEqual({
      name: "First", desc: "", list_name: "Later", label_names: ["Bug", "Priority: low"], attachment_urls: ["https://a.io/x", "HTTP://b.io/y"]
    })
  })
  it("only http(s) URLs are attached: not text, not other schemes, not a URL inside text", () => {
    const steps = [{ step_id: "u", string: "U", alias: "", taskboard_mapping: "Attachment" as const }]
    const plan = cardPlan(input({ steps }, { answers: { u: ["scan.pdf", "ftp://a.io/f", "xhttps://a.io/z", "https://a.io/<z>", "https://", "https://ok.io/1"] } }))
    expect(plan.attachment_urls).toStrictEqual(["https://ok.io/1"])
  })
  it("a URL in another mapping's answer is not attached", () => {
    const plan = cardPlan(input({}, { answers: { s2: "see https://x.io/desc", s7: "https://x.io/other", s1: "https://x.io/title" } }))
    expect(plan.attachment_urls).toStrictEqual([])
  })
  it("unmapped steps are on no card; the card does not depend on the summary flags", () => {
    const flags = { anonymize: true, highlight_attachments: true, extended_embed: true, disable_upvote: true, disable_downvote: true, taskboard_integration: true }
    expect(cardPlan(input(flags))).toStrictEqual(cardPlan(input()))
    expect(JSON.stringify(cardPlan(input()))).not.toContain("Thanks")
  })
})

describe("limits", () => {
  const many = (n: number, value: string) => {
    const steps = Array.from({ length: n }, (_, i) => ({ step_id: `q${i}`, string: `Question ${i}`, alias: "", taskboard_mapping: "" as const }))
    return { steps, answers: Object.fromEntries(steps.map((s) => [s.step_id, value])) }
  }
  it("at most 25 fields; with highlight_attachments the Attachments field is kept and answers make room", () => {
    const { answers, steps } = many(30, "x")
    expect(summaryMessage(input({ steps }, { answers })).embeds[0]?.fields).toHaveLength(25)
    const withFile = [...steps, { step_id: "f", string: "File", alias: "", taskboard_mapping: "Attachment" as const }]
    const fields = summaryMessage(input({ steps: withFile, highlight_attachments: true }, { answers: { ...answers, f: "https://a.io/f" } })).embeds[0]?.fields ?? []
    expect(fields).toHaveLength(25)
    expect(fields.at(-1)).toStrictEqual({ name: "Attachments", value: "[File](https://a.io/f)", inline: false })
    expect(fields.at(-2)?.name).toBe("Question 23")
  })
  it("a field value is cut at 1,024 characters, a field name and the title at 256, the author at 256", () => {
    const steps = [{ step_id: "a", string: "Q".repeat(300), alias: "", taskboard_mapping: "" as const }]
    const m = summaryMessage(input({ steps, title: "T".repeat(300) }, { answers: { a: "v".repeat(2000) }, member: { id: "1", name: "N".repeat(300), avatar_url: null } }))
    const [embed] = m.embeds
    expect([...(embed?.title ?? "")]).toHaveLength(256)
    expect(embed?.title.endsWith("…")).toBe(true)
    expect([...(embed?.author?.name ?? "")]).toHaveLength(256)
    expect([...(embed?.fields[0]?.name ?? "")]).toHaveLength(256)
    expect([...(embed?.fields[0]?.value ?? "")]).toHaveLength(1024)
  })
  it("the embed stays within 6,000 characters in all: answers past it are left out, in order", () => {
    const { answers, steps } = many(10, "v".repeat(1024))
    const [embed] = summaryMessage(input({ steps, highlight_attachments: true }, { answers })).embeds
    const total = (embed?.title.length ?? 0) + (embed?.author?.name.length ?? 0) +
      (embed?.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
    expect(total).toBeLessThanOrEqual(6000)
    expect(embed?.fields.map((f) => f.name)).toStrictEqual(["Question 0", "Question 1", "Question 2", "Question 3", "Question 4"])
    // Exactly at the limit is allowed: title 16 + author 5 + 5 × (10 + 1024) = 5191; one more answer of 809 fits.
    const edge = many(6, "v".repeat(1024))
    const last = "w".repeat(6000 - 16 - 5 - 5 * 1034 - 10)
    const full = summaryMessage(input({ steps: edge.steps }, { answers: { ...edge.answers, q5: last } })).embeds[0]
    expect(full?.fields).toHaveLength(6)
    const over = summaryMessage(input({ steps: edge.steps }, { answers: { ...edge.answers, q5: `${last}w` } })).embeds[0]
    expect(over?.fields).toHaveLength(5)
  })
  it("the Attachments field's room is kept before the answers fill the embed", () => {
    const { answers, steps } = many(10, "v".repeat(1024))
    const withFile = [...steps, { step_id: "f", string: "File", alias: "", taskboard_mapping: "Attachment" as const }]
    const [embed] = summaryMessage(input({ steps: withFile, highlight_attachments: true }, { answers: { ...answers, f: "https://a.io/f" } })).embeds
    const fields = embed?.fields ?? []
    const total = (embed?.title.length ?? 0) + (embed?.author?.name.length ?? 0) + fields.reduce((n, f) => n + f.name.length + f.value.length, 0)
    expect(total).toBeLessThanOrEqual(6000)
    expect(fields.map((f) => f.name)).toStrictEqual(["Question 0", "Question 1", "Question 2", "Question 3", "Question 4", "Attachments"])

    // An answer that would just fit without the Attachments field is left out with it.
    const edge = many(6, "v".repeat(1024))
    const last = "w".repeat(6000 - 16 - 5 - 5 * 1034 - 10)
    const file = { step_id: "f", string: "File", alias: "", taskboard_mapping: "Attachment" as const }
    const near = summaryMessage(input({ steps: [...edge.steps, file], highlight_attachments: true }, { answers: { ...edge.answers, q5: last, f: "https://a.io/f" } }))
    expect(near.embeds[0]?.fields.map((f) => f.name)).toStrictEqual(["Question 0", "Question 1", "Question 2", "Question 3", "Question 4", "Attachments"])
  })
  it("in task-board mode the card link counts toward the 6,000 too", () => {
    const edge = many(6, "v".repeat(1024))
    const link = `[View the card](${CARD_URL})`
    // title 16 + link + author 5 + 5 × 1034 + the last field (10 + its value) = 6000 exactly.
    const last = "w".repeat(6000 - 16 - link.length - 5 - 5 * 1034 - 10)
    const board = { steps: edge.steps, taskboard_integration: true, extended_embed: true }
    expect(summaryMessage(input(board, { answers: { ...edge.answers, q5: last } })).embeds[0]?.fields).toHaveLength(6)
    expect(summaryMessage(input(board, { answers: { ...edge.answers, q5: `${last}w` } })).embeds[0]?.fields).toHaveLength(5)
  })
  it("the card's name and description are cut at Trello's 16,384 characters", () => {
    const plan = cardPlan(input({}, { answers: { s1: "n".repeat(20000), s2: "d".repeat(20000) } }))
    expect([...plan.name]).toHaveLength(16384)
    expect([...plan.desc]).toHaveLength(16384)
  })
})

describe("vote custom ids", () => {
  it("round-trip, and anything else is not a vote", () => {
    expect(parseVoteCustomId(voteCustomId("up", "s-1"))).toStrictEqual({ direction: "up", submissionId: "s-1" })
    expect(parseVoteCustomId(voteCustomId("down", "a:b"))).toStrictEqual({ direction: "down", submissionId: "a:b" })
    for (const other of ["share:vote:sideways:s", "share:vote:up:", "xshare:vote:up:s", "review:pass:s", "share:vote:up:s\nx"]) {
      expect(parseVoteCustomId(other)).toBeUndefined()
    }
  })
})
