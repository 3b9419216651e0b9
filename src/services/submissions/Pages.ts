/**
 * A form's pages as modals (forms-runtime.md §3), pure: steps laid out greedily, at most five
 * top-level components a modal (the platform's limit); each step one Label (alias, else the
 * question, cut to 45) wrapping a Text Input (`message`) or a String Select (`reaction`), with the
 * question as description (cut to 100) when the label does not hold it, and a Text Display with the
 * whole question before it when neither holds it whole.
 */
import type { Step } from "../../domain/forms/Form.ts"
import type { ModalSpec } from "./Interaction.ts"

export const MAX_MODAL_COMPONENTS = 5
export const LABEL_MAX = 45
export const DESCRIPTION_MAX = 100
export const TITLE_MAX = 45

/** What a page needs of a form: its title and steps (the draft's snapshot). */
export interface PagedForm {
  readonly title: string
  readonly steps: ReadonlyArray<Step>
}

const chars = (s: string) => [...s]

/** `s` cut to `max` characters (code points), the last one `…` when cut. */
export const cut = (s: string, max: number): string => {
  const c = chars(s)
  return c.length <= max ? s : c.slice(0, max - 1).join("") + "…"
}

const labelOf = (step: Step) => cut(step.alias !== "" ? step.alias : step.string, LABEL_MAX)
const labelHolds = (step: Step) => labelOf(step) === step.string
/** A Text Display before the Label: the question is in neither the label nor the description whole. */
export const needsDisplay = (step: Step) => !labelHolds(step) && chars(step.string).length > DESCRIPTION_MAX

/** Top-level components a step takes in a modal: 1, or 2 with its Text Display. */
export const weight = (step: Step) => (needsDisplay(step) ? 2 : 1)

/** The steps in order on pages, each page as full as five components allow. */
export const layoutPages = (steps: ReadonlyArray<Step>): ReadonlyArray<ReadonlyArray<Step>> => {
  const pages: Array<Array<Step>> = []
  let current: Array<Step> = []
  let used = 0
  for (const step of steps) {
    const w = weight(step)
    if (used + w > MAX_MODAL_COMPONENTS) {
      pages.push(current)
      current = []
      used = 0
    }
    current.push(step)
    used += w
  }
  if (current.length > 0) pages.push(current)
  return pages
}

/** The modal's title: the form's, cut so that ` (k/n)` fits within 45 when there are several pages. */
export const modalTitle = (title: string, page: number, pageCount: number) => {
  if (pageCount <= 1) return cut(title, TITLE_MAX)
  const suffix = ` (${page + 1}/${pageCount})`
  return cut(title, TITLE_MAX - suffix.length) + suffix
}

/** The custom id of a step's input in a modal. */
export const fieldId = (step: Step) => `s${step.step_id}`

const input = (step: Step, value: string | undefined) => {
  if (step.type === "reaction") {
    return {
      type: 3,
      custom_id: fieldId(step),
      min_values: 1,
      max_values: 1,
      required: true,
      options: step.answers_validation.map((a, i) => ({
        label: cut(a, 100),
        value: String(i),
        ...(value === a ? { default: true } : {})
      }))
    }
  }
  const [min, max] = step.char_limit
  return {
    type: 4,
    custom_id: fieldId(step),
    style: max > 100 ? 2 : 1,
    min_length: min,
    max_length: max,
    required: true,
    ...(value === undefined || value === "" ? {} : { value: cut(value, max) })
  }
}

/** Page `page` of `form` as a modal, filled with `answers` (by step id) where the member has some. */
export const pageModal = (
  form: PagedForm,
  page: number,
  customId: string,
  answers: Readonly<Record<string, string>>
): ModalSpec => {
  const pages = layoutPages(form.steps)
  const components: Array<unknown> = []
  for (const step of pages[page] ?? []) {
    if (needsDisplay(step)) components.push({ type: 10, content: cut(step.string, 4000) })
    components.push({
      type: 18,
      label: labelOf(step),
      ...(labelHolds(step) ? {} : { description: cut(step.string, DESCRIPTION_MAX) }),
      component: input(step, answers[String(step.step_id)])
    })
  }
  return { custom_id: customId, title: modalTitle(form.title, page, pages.length), components }
}
