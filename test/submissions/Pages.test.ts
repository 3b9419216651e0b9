/** Pages as modals (forms-runtime.md §3) and their answers read back, table by table. */
import { describe, expect, it } from "@effect/vitest"
import type { Step } from "../../src/domain/forms/Form.ts"
import { failureMessage, readPage, validationFailures } from "../../src/services/submissions/ModalAnswers.ts"
import type { Component } from "./InteractionClient.ts"
import { cut, layoutPages, modalTitle, needsDisplay, pageModal } from "../../src/services/submissions/Pages.ts"

const step = (id: number, over: Partial<Step> = {}): Step => ({
  step_id: id,
  type: "message",
  string: `Question ${id}?`,
  answers_validation: [],
  char_limit: [1, 100],
  alias: "",
  taskboard_mapping: "",
  ...over
})
const long = (n: number) => "q".repeat(n)

describe("cut", () => {
  it("keeps what fits, cuts the rest with … counted in", () => {
    expect(cut("abc", 3)).toBe("abc")
    expect(cut("abcd", 3)).toBe("ab…")
    expect([...cut(long(50), 45)].length).toBe(45)
    // Code points, not UTF-16 units: an emoji is one character.
    expect(cut("😀😀😀", 3)).toBe("😀😀😀")
    expect(cut("😀😀😀😀", 3)).toBe("😀😀…")
  })
})

describe("layoutPages", () => {
  it("fills each page greedily up to five components", () => {
    const steps = Array.from({ length: 7 }, (_, i) => step(i + 1))
    expect(layoutPages(steps).map((p) => p.map((s) => s.step_id))).toEqual([[1, 2, 3, 4, 5], [6, 7]])
    expect(layoutPages(steps.slice(0, 5)).length).toBe(1)
    expect(layoutPages(steps.slice(0, 6)).length).toBe(2)
    expect(layoutPages([])).toEqual([])
  })

  it("counts a question that needs a Text Display as two", () => {
    const steps = [step(1), step(2), step(3), step(4, { string: long(101) }), step(5)]
    expect(layoutPages(steps).map((p) => p.map((s) => s.step_id))).toEqual([[1, 2, 3, 4], [5]])
    const last = [step(1), step(2), step(3), step(4), step(5, { string: long(101) })]
    expect(layoutPages(last).map((p) => p.map((s) => s.step_id))).toEqual([[1, 2, 3, 4], [5]])
    const five = [step(1, { string: long(200) }), step(2, { string: long(200) }), step(3)]
    expect(layoutPages(five).map((p) => p.length)).toEqual([3])
    const six = [step(1, { string: long(200) }), step(2, { string: long(200) }), step(3, { string: long(200) })]
    expect(layoutPages(six).map((p) => p.length)).toEqual([2, 1])
  })

  it("needs a display only when neither the label nor the description holds the question whole", () => {
    expect(needsDisplay(step(1, { string: long(45) }))).toBe(false)
    expect(needsDisplay(step(1, { string: long(100) }))).toBe(false)
    expect(needsDisplay(step(1, { string: long(101) }))).toBe(true)
    expect(needsDisplay(step(1, { string: long(101), alias: "Short" }))).toBe(true)
    expect(needsDisplay(step(1, { string: long(100), alias: "Short" }))).toBe(false)
  })
})

describe("modalTitle", () => {
  it("cuts the title so that (k/n) fits in 45", () => {
    expect(modalTitle("Apply", 0, 1)).toBe("Apply")
    expect(modalTitle("Apply", 1, 3)).toBe("Apply (2/3)")
    const t = modalTitle(long(60), 0, 2)
    expect([...t].length).toBe(45)
    expect(t.endsWith("… (1/2)")).toBe(true)
    expect([...modalTitle(long(60), 0, 1)].length).toBe(45)
    expect(modalTitle(long(39), 0, 2)).toBe(`${long(39)} (1/2)`)
  })
})

describe("pageModal", () => {
  it("a Label per step: alias or question (45), description when the label does not hold it, inputs by type", () => {
    const form = {
      title: "T",
      steps: [
        step(1, { alias: "Name" }),
        step(2, { char_limit: [10, 101] }),
        step(3, { type: "reaction", answers_validation: ["A", "B"] }),
        step(4, { string: long(120) })
      ]
    }
    const m = pageModal(form, 0, "f:page:x:0", { "1": "Bob", "3": "B" })
    expect(m.custom_id).toBe("f:page:x:0")
    expect(m.title).toBe("T")
    const c = m.components as ReadonlyArray<Component>
    expect(c.map((x) => x.type)).toEqual([18, 18, 18, 10, 18])
    expect(c[0]).toMatchObject({ label: "Name", description: "Question 1?", component: { type: 4, custom_id: "s1", style: 1, min_length: 1, max_length: 100, required: true, value: "Bob" } })
    expect(c[1]!.description).toBeUndefined()
    expect(c[1]!.component).toMatchObject({ style: 2, min_length: 10, max_length: 101 })
    expect(c[1]!.component?.value).toBeUndefined()
    expect(c[2]!.component).toMatchObject({ type: 3, custom_id: "s3", min_values: 1, max_values: 1, options: [{ label: "A", value: "0" }, { label: "B", value: "1", default: true }] })
    expect(c[3]).toEqual({ type: 10, content: long(120) })
    expect([...c[4]!.label!].length).toBe(45)
    expect([...c[4]!.description!].length).toBe(100)
  })
})

describe("readPage", () => {
  const steps = [step(1, { char_limit: [2, 5] }), step(2, { type: "reaction", answers_validation: ["A", "B"] })]
  const text = (id: string, value: unknown) => ({ type: 18, component: { type: 4, custom_id: id, value } })
  const pick = (id: string, values: unknown) => ({ type: 18, component: { type: 3, custom_id: id, values } })

  it("reads a page's answers: texts as sent, a choice as its answer", () => {
    expect(readPage(steps, [text("s1", "abc"), pick("s2", ["1"])])).toEqual({ _tag: "Answers", answers: { "1": "abc", "2": "B" } })
    // Text Displays sent back, and the older action-row wrapping of a text input.
    expect(readPage(steps, [{ type: 10, id: 3 }, { type: 1, components: [{ type: 4, custom_id: "s1", value: "ab" }] }, pick("s2", ["0"])]))
      .toEqual({ _tag: "Answers", answers: { "1": "ab", "2": "A" } })
  })

  it("refuses what the modal would not have sent", () => {
    const refused = (components: ReadonlyArray<unknown>) => expect(readPage(steps, components)._tag).toBe("Refused")
    refused([text("s1", "a"), pick("s2", ["0"])])
    refused([text("s1", "abcdef"), pick("s2", ["0"])])
    refused([text("s1", "abc"), pick("s2", ["2"])])
    refused([text("s1", "abc"), pick("s2", ["0", "1"])])
    refused([text("s1", "abc"), pick("s2", [])])
    refused([text("s1", "abc"), pick("s2", ["01"])])
    refused([text("s1", "abc"), pick("s2", [0])])
    refused([text("s1", "abc")])
    refused([text("s1", "abc"), pick("s2", ["0"]), text("s9", "x")])
    refused([text("s1", "abc"), text("s1", "abd"), pick("s2", ["0"])])
    refused([text("s1", 5), pick("s2", ["0"])])
    refused([pick("s1", ["0"]), pick("s2", ["0"])])
    refused([text("s1", "abc"), text("s2", "A")])
    refused([{ type: 99 }, text("s1", "abc"), pick("s2", ["0"])])
    refused(["x", text("s1", "abc"), pick("s2", ["0"])])
    refused([{ type: 18, component: { type: 4, value: "abc" } }, pick("s2", ["0"])])
    refused([{ type: 1, components: [] }, text("s1", "abc"), pick("s2", ["0"])])
  })

  it("counts characters as code points", () => {
    expect(readPage([step(1, { char_limit: [1, 2] })], [text("s1", "😀😀")])._tag).toBe("Answers")
    expect(readPage([step(1, { char_limit: [1, 2] })], [text("s1", "😀😀😀")])._tag).toBe("Refused")
  })
})

describe("validationFailures", () => {
  const s = step(1, { answers_validation: ["yes", "I agree"] })
  it("needs one of the words, folded as the feed word filters fold", () => {
    expect(validationFailures([s], { "1": "YES!" })).toEqual([])
    expect(validationFailures([s], { "1": "i   AGREE" })).toEqual([])
    expect(validationFailures([s], { "1": "no" })).toEqual([s])
    expect(validationFailures([s], {})).toEqual([s])
    expect(validationFailures([step(2)], { "2": "anything" })).toEqual([])
    expect(validationFailures([step(3, { type: "reaction", answers_validation: ["A"] })], { "3": "A" })).toEqual([])
  })

  it("names each failing question with its words", () => {
    const text = failureMessage([s, step(2, { alias: "Age", answers_validation: ["18"] })])
    expect(text).toContain(`Question 1?: "yes", "I agree"`)
    expect(text).toContain(`Age: "18"`)
  })
})
