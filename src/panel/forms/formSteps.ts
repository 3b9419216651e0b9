/** The steps editor of a form: add, remove, reorder; each step's type, question, answers, length limits, alias and task-board field. */
import { h } from "preact"
import type { DraftStep } from "./formDraft.ts"
import { newStep } from "./formDraft.ts"
import type { Errors } from "../fields.ts"
import { ErrorText, Field, idOf, invalid, valueOf } from "../fields.ts"

/** The envelope's path of each field of a step (after `steps[i]`). */
const STEP_PATH: Record<keyof DraftStep, string> = {
  key: "",
  type: ".type",
  string: ".string",
  answers: ".answers_validation",
  min: ".char_limit",
  max: ".char_limit",
  alias: ".alias",
  taskboard_mapping: ".taskboard_mapping"
}

export const StepsEditor = (props: {
  readonly steps: ReadonlyArray<DraftStep>
  readonly errors: Errors
  /** The task-board fields a step may map to. */
  readonly options: ReadonlyArray<string>
  /** What the last change of the steps did, said to screen readers. */
  readonly status: string
  readonly say: (status: string) => void
  readonly change: (f: (steps: ReadonlyArray<DraftStep>) => ReadonlyArray<DraftStep>) => void
  readonly clearProblems: () => void
  /** A field was edited: its error goes (the next save says again if it is still wrong). */
  readonly fixed: (path: string) => void
}) => {
  const setStep = (i: number, patch: Partial<DraftStep>) => {
    for (const key of Object.keys(patch) as Array<keyof DraftStep>) props.fixed(`steps[${i}]${STEP_PATH[key]}`)
    props.change((steps) => steps.map((s, j) => (j === i ? { ...s, ...patch } : s)))
  }
  const move = (i: number, by: number) => {
    props.clearProblems()
    props.change((steps) => {
      const next = [...steps]
      const [s] = next.splice(i, 1)
      next.splice(i + by, 0, s!)
      return next
    })
    props.say(`Moved step ${i + 1} to position ${i + by + 1}.`)
  }
  return h("section", { "aria-labelledby": "sec-steps" },
    h("h2", { id: "sec-steps" }, `Steps (${props.steps.length})`),
    h(ErrorText, { path: "steps", errors: props.errors }),
    // Said to screen readers only: a sighted person sees the step move where they clicked.
    h("p", { role: "status", class: "visually-hidden" }, props.status),
    h("ol", { class: "steps" }, ...props.steps.map((s, i) => {
      const at = (f: string) => `steps[${i}]${f}`
      return h("li", { key: String(s.key) },
        h("fieldset", { class: "step", id: idOf(at("")) },
          h("legend", null, `Step ${i + 1}`),
          h(ErrorText, { path: at(""), errors: props.errors }),
          h("div", { class: "step-grid" },
            h(Field, { path: at(".type"), label: "Type", errors: props.errors },
              h("select", { id: idOf(at(".type")), value: s.type, ...invalid(at(".type"), props.errors), onChange: (e: Event) => setStep(i, { type: valueOf(e) === "reaction" ? "reaction" : "message" }) },
                h("option", { value: "message" }, "Message (a written answer)"),
                h("option", { value: "reaction" }, "Reaction (pick an answer)"))),
            h(Field, { path: at(".alias"), label: "Alias", errors: props.errors },
              h("input", { id: idOf(at(".alias")), type: "text", value: s.alias, maxLength: 256, ...invalid(at(".alias"), props.errors), onInput: (e: Event) => setStep(i, { alias: valueOf(e) }) })),
            h(Field, { path: at(".taskboard_mapping"), label: "Task-board field", errors: props.errors },
              h("select", { id: idOf(at(".taskboard_mapping")), value: s.taskboard_mapping, ...invalid(at(".taskboard_mapping"), props.errors), onChange: (e: Event) => setStep(i, { taskboard_mapping: valueOf(e) }) },
                h("option", { value: "" }, "Not mapped"),
                ...props.options.map((o) => h("option", { key: o, value: o }, o))))),
          h(Field, { path: at(".string"), label: "Question", errors: props.errors },
            h("textarea", { id: idOf(at(".string")), rows: 2, value: s.string, maxLength: 2000, ...invalid(at(".string"), props.errors), onInput: (e: Event) => setStep(i, { string: valueOf(e) }) })),
          h(Field, { path: at(".answers_validation"), label: "Answers, one per line", hint: s.type === "reaction" ? "A reaction step needs 1 to 20 answers." : "Optional: the accepted answers.", errors: props.errors },
            h("textarea", { id: idOf(at(".answers_validation")), rows: 3, value: s.answers, ...invalid(at(".answers_validation"), props.errors), onInput: (e: Event) => setStep(i, { answers: valueOf(e) }) })),
          h("fieldset", { class: "limits", id: idOf(at(".char_limit")), ...invalid(at(".char_limit"), props.errors) },
            h("legend", null, "Answer length (characters)"),
            h("label", null, "Minimum ", h("input", { type: "number", min: 1, max: 2000, value: s.min, onInput: (e: Event) => setStep(i, { min: valueOf(e) }) })),
            h("label", null, "Maximum ", h("input", { type: "number", min: 1, max: 2000, value: s.max, onInput: (e: Event) => setStep(i, { max: valueOf(e) }) })),
            h(ErrorText, { path: at(".char_limit"), errors: props.errors })),
          h("div", { class: "step-actions" },
            h("button", { type: "button", class: "secondary", disabled: i === 0, "aria-label": `Move step ${i + 1} up`, onClick: () => move(i, -1) }, "↑ Up"),
            h("button", { type: "button", class: "secondary", disabled: i === props.steps.length - 1, "aria-label": `Move step ${i + 1} down`, onClick: () => move(i, 1) }, "↓ Down"),
            h("button", {
              type: "button",
              class: "danger",
              "aria-label": `Remove step ${i + 1}`,
              onClick: () => {
                props.clearProblems()
                props.change((steps) => steps.filter((_, j) => j !== i))
                props.say(`Removed step ${i + 1}.`)
              }
            }, "Remove"))))
    })),
    h("button", {
      type: "button",
      class: "secondary",
      disabled: props.steps.length >= 25,
      onClick: () => {
        props.change((steps) => [...steps, newStep()])
        props.say(`Added step ${props.steps.length + 1}.`)
      }
    }, "Add a step"))
}
