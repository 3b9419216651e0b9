/** The form fields the editors share: a labelled field with its hint and its errors from the envelope. */
import { h } from "preact"
import type { ComponentChildren, RefObject } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import type { Failure, FieldProblem } from "./problems.ts"
import { withoutPath } from "./problems.ts"
import { setGuard } from "./router.ts"

/** Messages per field path (`title`, `steps[2].char_limit`, `webhook_options.filter_words`). */
export type Errors = ReadonlyMap<string, ReadonlyArray<string>>

/** The value of the input, select or textarea an event came from. */
export const valueOf = (e: Event) => (e.currentTarget as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement).value

export const idOf = (path: string) => "f-" + path.replace(/[^A-Za-z0-9]+/g, "-")

/** The field a problem's path belongs to: the path itself, or the list it is an element of. */
export const fieldOf = (path: string, known: ReadonlySet<string>): string | undefined => {
  let p = path
  for (;;) {
    if (known.has(p)) return p
    const shorter = p.replace(/(\[\d+\]|\.[^.[\]]+)$/, "")
    if (shorter === p || shorter === "") return undefined
    p = shorter
  }
}

/** The problems of a refused save, grouped by the field of the editor that shows them. */
export const errorsOf = (problems: ReadonlyArray<FieldProblem>, known: ReadonlySet<string>): Map<string, Array<string>> => {
  const errors = new Map<string, Array<string>>()
  for (const p of problems) {
    const field = p.path === undefined ? undefined : fieldOf(p.path, known)
    if (field !== undefined) errors.set(field, [...(errors.get(field) ?? []), withoutPath(p)])
  }
  return errors
}

export const ErrorText = (props: { readonly path: string; readonly errors: Errors }) => {
  const messages = props.errors.get(props.path)
  return messages === undefined ? null : h("p", { class: "field-error", id: `${idOf(props.path)}-error` }, messages.join(" "))
}

export const invalid = (path: string, errors: Errors): { "aria-invalid"?: "true"; "aria-describedby"?: string } =>
  errors.has(path) ? { "aria-invalid": "true", "aria-describedby": `${idOf(path)}-error` } : {}

export const Field = (props: { readonly path: string; readonly label: string; readonly errors: Errors; readonly hint?: string; readonly children?: ComponentChildren }) =>
  h("div", { class: "field" },
    h("label", { for: idOf(props.path) }, props.label),
    props.hint === undefined ? null : h("span", { class: "hint", id: `${idOf(props.path)}-hint` }, props.hint),
    props.children,
    h(ErrorText, { path: props.path, errors: props.errors }))

/** A refused save: what to fix, each problem a link to its field; takes the focus (the caller's ref). */
export const SaveProblems = (props: {
  readonly what: string
  readonly failure: { readonly message: string }
  readonly problems: ReadonlyArray<FieldProblem>
  readonly known: ReadonlySet<string>
  readonly summary: RefObject<HTMLDivElement | null>
}) =>
  h("div", { class: "error", role: "alert", tabIndex: -1, ref: props.summary },
    h("p", null, props.problems.length > 0 ? `The ${props.what} was not saved. Fix the fields marked below:` : props.failure.message),
    props.problems.length > 0
      ? h("ul", null, ...props.problems.map((p, i) => {
        const field = p.path === undefined ? undefined : fieldOf(p.path, props.known)
        return h("li", { key: String(i) }, field === undefined ? p.message : h("a", { href: `#${idOf(field)}` }, p.message))
      }))
      : null)

/**
 * An editor's two guards: a refused save moves the focus to the summary of what to fix (and brings
 * it into view), and leaving with unsaved changes asks first. Returns the summary's ref.
 */
export const useSaveGuards = (what: "form" | "feed", failure: unknown, dirty: boolean) => {
  const summary = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (failure !== undefined) summary.current?.focus()
  }, [failure])
  useEffect(() => {
    setGuard(dirty ? () => `You have unsaved changes to this ${what}. Leave without saving?` : undefined)
    return () => setGuard(undefined)
  }, [dirty])
  return summary
}

/**
 * A refused save's problems and failure, as an editor holds them. `fixed(...paths)`: the edited
 * fields' errors go at once; when none is left, so does the summary (the next save checks again).
 * Updates are functional, so several fields fixed by one edit each take their own errors away.
 */
export const useProblems = (known: ReadonlySet<string>) => {
  const [state, setState] = useState<{ readonly problems: ReadonlyArray<FieldProblem>; readonly failure: Failure | undefined }>({ problems: [], failure: undefined })
  const fixed = (...paths: ReadonlyArray<string>) =>
    setState((s) => {
      const left = s.problems.filter((p) => p.path === undefined || !paths.includes(fieldOf(p.path, known) ?? ""))
      return left.length === s.problems.length ? s : { problems: left, failure: left.length === 0 ? undefined : s.failure }
    })
  return {
    problems: state.problems,
    failure: state.failure,
    setProblems: (problems: ReadonlyArray<FieldProblem>) => setState((s) => ({ ...s, problems })),
    setFailure: (failure: Failure | undefined) => setState((s) => ({ ...s, failure })),
    fixed
  }
}
