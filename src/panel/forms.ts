/** The forms module: the list, and the editor of every field of a form (gateway-api.md "Forms"). */
import { h } from "preact"
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { Effect, Result, Schema } from "effect"
import { BOARD_NO_TEAM, BotId, FORM_FLAGS, FormId, FormInput, ServerId } from "../http/client.ts"
import type { Board, Form, FormFlag, Server } from "../http/client.ts"
import type { Failure, FieldProblem } from "./problems.ts"
import { toFailure, withoutPath } from "./problems.ts"
import { navigate, setGuard } from "./router.ts"
import { call } from "./session.ts"
import { ErrorBox, Page, show, useLoad } from "./ui.ts"

const paramsOf = (bot: string, server: string) => ({ appClientId: BotId.make(bot), serverId: ServerId.make(server) })
const crumbs = (bot: string, server: string, name: string) => [
  { label: "Bots", href: "/app" },
  { label: "Servers", href: `/app/bots/${bot}` },
  { label: name, href: `/app/bots/${bot}/servers/${server}` }
]

export const FormsList = (props: { readonly bot: string; readonly server: string }) => {
  const params = paramsOf(props.bot, props.server)
  const base = `/app/bots/${props.bot}/servers/${props.server}/forms`
  const [data, reload] = useLoad(`forms:${base}`, () =>
    call((c) => Effect.all({ server: c.general.server({ params }), forms: c.forms.list({ params }) })))
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [status, setStatus] = useState("")
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const remove = async (id: number, title: string) => {
    if (!confirm(`Delete the form “${title}”? This cannot be undone.`)) return
    const answer = await call((c) => c.forms.delete({ params: { ...params, formId: FormId.make(id) } }))
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else {
      setFailure(undefined)
      setStatus(`Deleted the form “${title}”.`)
      reload()
    }
  }
  return h(Page, {
    title: `Forms on ${name}`,
    crumbs: [...crumbs(props.bot, props.server, name), { label: "Forms" }],
    actions: h("a", { class: "button", href: `${base}/new` }, "New form")
  },
  h("p", { role: "status", class: "notice-line" }, status),
  failure === undefined ? null : h(ErrorBox, { failure }),
  show(data, "the forms", reload, ({ forms }) =>
    forms.forms.length === 0
      ? h("p", null, "This server has no form yet.")
      : h("div", { class: "table-wrap" },
        h("table", null,
          h("caption", { class: "visually-hidden" }, "Forms of this server"),
          h("thead", null, h("tr", null, h("th", { scope: "col" }, "Title"), h("th", { scope: "col" }, "Live"), h("th", { scope: "col" }, "Task board"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
          h("tbody", null, ...forms.forms.map((f) =>
            h("tr", { key: String(f.workflow_id) },
              h("th", { scope: "row" },
                h("span", { class: "swatch", style: `background:${f.color_hex}`, "aria-hidden": "true" }),
                h("a", { href: `${base}/${f.workflow_id}` }, f.title)),
              h("td", null, f.workflow_live ? "Live" : "Draft"),
              h("td", null, f.taskboard_integration ? "On" : "Off"),
              h("td", { class: "actions" },
                h("a", { href: `${base}/${f.workflow_id}`, "aria-label": `Edit ${f.title}` }, "Edit"),
                h("button", { type: "button", class: "danger", "aria-label": `Delete ${f.title}`, onClick: () => void remove(f.workflow_id, f.title) }, "Delete")))))))))
}

// ---------------------------------------------------------------------------------------------
// The editor
// ---------------------------------------------------------------------------------------------

interface DraftStep {
  readonly key: number
  readonly type: "message" | "reaction"
  readonly string: string
  readonly answers: string
  readonly min: string
  readonly max: string
  readonly alias: string
  readonly taskboard_mapping: string
}

interface Draft {
  readonly title: string
  readonly color_hex: string
  readonly channel_id: string
  readonly fwd_channel_ids: ReadonlyArray<string>
  readonly role_mentions: ReadonlyArray<string>
  readonly public_mentions: ReadonlyArray<string>
  readonly taskboard_board: string
  readonly flags: Readonly<Record<FormFlag, boolean>>
  readonly steps: ReadonlyArray<DraftStep>
}

let nextKey = 1
/** What the editor says after creating a form, shown by the editor of the created form. */
let carried = ""
const draftOf = (form: Form): Draft => ({
  title: form.workflow_id === null ? "" : form.title,
  color_hex: form.color_hex,
  channel_id: form.channel_id ?? "",
  fwd_channel_ids: form.fwd_channel_ids,
  role_mentions: form.role_mentions,
  public_mentions: form.public_mentions,
  taskboard_board: form.taskboard_board,
  flags: Object.fromEntries(FORM_FLAGS.map((f) => [f, form[f]])) as Record<FormFlag, boolean>,
  steps: form.steps.map((s) => ({
    key: nextKey++,
    type: s.type,
    string: s.string,
    answers: s.answers_validation.join("\n"),
    min: String(s.char_limit[0]),
    max: String(s.char_limit[1]),
    alias: s.alias,
    taskboard_mapping: s.taskboard_mapping
  }))
})

const newStep = (): DraftStep => ({ key: nextKey++, type: "message", string: "", answers: "", min: "1", max: "2000", alias: "", taskboard_mapping: "" })

const number = (s: string) => (s.trim() === "" ? Number.NaN : Number(s))

/** The body of POST and PATCH (FormInput) from the draft. */
const bodyOf = (d: Draft) => ({
  title: d.title,
  color_hex: d.color_hex,
  channel_id: d.channel_id === "" ? null : d.channel_id,
  fwd_channel_ids: d.fwd_channel_ids,
  role_mentions: d.role_mentions,
  public_mentions: d.public_mentions,
  taskboard_board: d.taskboard_board,
  ...d.flags,
  steps: d.steps.map((s) => ({
    type: s.type,
    string: s.string,
    answers_validation: s.answers.split("\n").map((a) => a.trim()).filter((a) => a !== ""),
    char_limit: [number(s.min), number(s.max)],
    alias: s.alias,
    taskboard_mapping: s.taskboard_mapping
  }))
})

const FLAG_LABELS: Record<FormFlag, string> = {
  workflow_live: "Live (members can submit it)",
  taskboard_integration: "Send submissions to the task board",
  anonymize: "Anonymize submissions",
  disable_downvote: "Disable down-votes",
  disable_upvote: "Disable up-votes",
  extended_embed: "Extended embed",
  highlight_attachments: "Highlight attachments",
  anonymize_rejection: "Anonymize rejections",
  disable_mentions: "Disable mentions",
  disable_priorities: "Disable priorities"
}

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

export const ErrorText = (props: { readonly path: string; readonly errors: ReadonlyMap<string, ReadonlyArray<string>> }) => {
  const messages = props.errors.get(props.path)
  return messages === undefined ? null : h("p", { class: "field-error", id: `${idOf(props.path)}-error` }, messages.join(" "))
}

export const invalid = (path: string, errors: ReadonlyMap<string, ReadonlyArray<string>>): { "aria-invalid"?: "true"; "aria-describedby"?: string } =>
  errors.has(path) ? { "aria-invalid": "true", "aria-describedby": `${idOf(path)}-error` } : {}

export const Field = (props: { readonly path: string; readonly label: string; readonly errors: ReadonlyMap<string, ReadonlyArray<string>>; readonly hint?: string; readonly children?: ComponentChildren }) =>
  h("div", { class: "field" },
    h("label", { for: idOf(props.path) }, props.label),
    props.hint === undefined ? null : h("span", { class: "hint", id: `${idOf(props.path)}-hint` }, props.hint),
    props.children,
    h(ErrorText, { path: props.path, errors: props.errors }))

const Checks = (props: {
  readonly path: string
  readonly legend: string
  readonly options: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly value: ReadonlyArray<string>
  readonly onChange: (next: ReadonlyArray<string>) => void
  readonly errors: ReadonlyMap<string, ReadonlyArray<string>>
}) =>
  h("fieldset", { class: "checks", id: idOf(props.path), ...invalid(props.path, props.errors) },
    h("legend", null, props.legend),
    props.options.length === 0 ? h("p", { class: "muted" }, "None on this server.") : null,
    ...props.options.map((o) =>
      h("label", { key: o.id, class: "check" },
        h("input", {
          type: "checkbox",
          checked: props.value.includes(o.id),
          onChange: (e) => props.onChange(e.currentTarget.checked ? [...props.value, o.id] : props.value.filter((v) => v !== o.id))
        }),
        " ", o.name)),
    h(ErrorText, { path: props.path, errors: props.errors }))

interface EditorData {
  readonly server: Server
  readonly form: Form
  readonly boards: ReadonlyArray<Board>
  readonly options: ReadonlyArray<string>
}

export const FormEditor = (props: { readonly bot: string; readonly server: string; readonly form: string | undefined }) => {
  const params = paramsOf(props.bot, props.server)
  const base = `/app/bots/${props.bot}/servers/${props.server}/forms`
  const [data, reload] = useLoad(`editor:${base}/${props.form ?? "new"}`, () =>
    call((c) =>
      Effect.all({
        server: c.general.server({ params }),
        form: props.form === undefined ? c.forms.template({ params }) : c.forms.get({ params: { ...params, formId: FormId.make(Number(props.form)) } }),
        boards: Effect.map(c.forms.taskboardBoards({ params }), (r) => r.taskboard_boards),
        options: Effect.map(c.forms.taskboardOptions({ params }), (r) => r.options)
      })
    ))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const title = props.form === undefined ? "New form" : data.kind === "ok" ? `Edit “${data.value.form.title}”` : "Edit form"
  return h(Page, { title, crumbs: [...crumbs(props.bot, props.server, name), { label: "Forms", href: base }, { label: props.form === undefined ? "New form" : "Edit" }] },
    show(data, "the form", reload, (loaded) => h(Editor, { key: props.form ?? "new", data: loaded, bot: props.bot, server: props.server, formId: props.form, base })))
}

const Editor = (props: { readonly data: EditorData; readonly bot: string; readonly server: string; readonly formId: string | undefined; readonly base: string }) => {
  const { server, boards, options } = props.data
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.data.form))
  const [saved, setSaved] = useState<Draft>(draft)
  const [problems, setProblems] = useState<ReadonlyArray<FieldProblem>>([])
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const [status, setStatus] = useState(() => {
    const said = carried
    carried = ""
    return said
  })
  const dirty = JSON.stringify(draft) !== JSON.stringify(saved)
  const summary = useRef<HTMLDivElement>(null)
  // A refused save: the summary of what to fix takes the focus (and comes into view).
  useEffect(() => {
    if (failure !== undefined) summary.current?.focus()
  }, [failure])
  useEffect(() => {
    setGuard(dirty ? () => "You have unsaved changes to this form. Leave without saving?" : undefined)
    return () => setGuard(undefined)
  }, [dirty])

  // The form's board stays selectable even when the server's list no longer has it.
  const boardChoices = boards.some((b) => b.id === draft.taskboard_board)
    ? boards
    : [{ id: draft.taskboard_board, name: draft.taskboard_board === BOARD_NO_TEAM.id ? BOARD_NO_TEAM.name : `Board ${draft.taskboard_board}` }, ...boards]
  const postable = server.channels.filter((c) => c.type === "GuildText" || c.type === "GuildNews")
  const channelOptions = postable.map((c) => ({ id: c.id, name: `#${c.name}` }))
  const roleOptions = server.roles.map((r) => ({ id: r.id, name: r.name.startsWith("@") ? r.name : `@${r.name}` }))
  const known = new Set<string>([
    "title", "color_hex", "channel_id", "fwd_channel_ids", "role_mentions", "public_mentions", "taskboard_board", "steps", ...FORM_FLAGS,
    ...draft.steps.flatMap((_, i) => ["", ".type", ".string", ".answers_validation", ".char_limit", ".alias", ".taskboard_mapping"].map((f) => `steps[${i}]${f}`))
  ])
  const errors = new Map<string, Array<string>>()
  for (const p of problems) {
    const field = p.path === undefined ? undefined : fieldOf(p.path, known)
    if (field !== undefined) errors.set(field, [...(errors.get(field) ?? []), withoutPath(p)])
  }

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }))
  const setStep = (i: number, patch: Partial<DraftStep>) =>
    setDraft((d) => ({ ...d, steps: d.steps.map((s, j) => (j === i ? { ...s, ...patch } : s)) }))
  const move = (i: number, by: number) => {
    setProblems([])
    setDraft((d) => {
      const steps = [...d.steps]
      const [s] = steps.splice(i, 1)
      steps.splice(i + by, 0, s!)
      return { ...d, steps }
    })
    setStatus(`Moved step ${i + 1} to position ${i + by + 1}.`)
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setStatus("")
    setFailure(undefined)
    const body = bodyOf(draft)
    // The same schema the gateway decodes with, every problem at once; the server's own rules follow.
    const local = Schema.decodeUnknownResult(FormInput)(body, { errors: "all" })
    if (Result.isFailure(local)) {
      const failed = toFailure(local.failure)
      setProblems(failed.problems)
      setFailure(failed)
      setBusy(false)
      return
    }
    const payload = local.success
    const answer = await call((c) =>
      props.formId === undefined
        ? c.forms.create({ params: paramsOf(props.bot, props.server), payload })
        : c.forms.update({ params: { ...paramsOf(props.bot, props.server), formId: FormId.make(Number(props.formId)) }, payload }))
    setBusy(false)
    if (Result.isFailure(answer)) {
      setProblems(answer.failure.problems)
      setFailure(answer.failure)
      return
    }
    setProblems([])
    const next = draftOf(answer.success)
    setDraft(next)
    setSaved(next)
    if (props.formId === undefined) {
      carried = `Created the form “${answer.success.title}”.`
      navigate(`${props.base}/${answer.success.workflow_id}`, { replace: true, force: true })
    } else setStatus(`Saved the form “${answer.success.title}”.`)
  }

  return h("form", { class: "editor", onSubmit: save, noValidate: true },
    failure === undefined ? null : h("div", { class: "error", role: "alert", tabIndex: -1, ref: summary },
      h("p", null, problems.length > 0 ? "The form was not saved. Fix the fields marked below:" : failure.message),
      problems.length > 0
        ? h("ul", null, ...problems.map((p, i) => {
          const field = p.path === undefined ? undefined : fieldOf(p.path, known)
          return h("li", { key: String(i) }, field === undefined ? p.message : h("a", { href: `#${idOf(field)}` }, p.message))
        }))
        : null),
    h("section", { "aria-labelledby": "sec-general" },
      h("h2", { id: "sec-general" }, "General"),
      h(Field, { path: "title", label: "Title", errors },
        h("input", { id: idOf("title"), type: "text", value: draft.title, maxLength: 256, required: true, ...invalid("title", errors), onInput: (e: Event) => set("title", valueOf(e)) })),
      h(Field, { path: "color_hex", label: "Colour", errors },
        h("input", { id: idOf("color_hex"), type: "color", value: draft.color_hex, ...invalid("color_hex", errors), onInput: (e: Event) => set("color_hex", valueOf(e)) })),
      h(Field, { path: "channel_id", label: "Channel", hint: "Where submissions are posted; needed for a live form.", errors },
        h("select", { id: idOf("channel_id"), value: draft.channel_id, "aria-describedby": errors.has("channel_id") ? `${idOf("channel_id")}-error ${idOf("channel_id")}-hint` : `${idOf("channel_id")}-hint`, "aria-invalid": errors.has("channel_id") ? "true" : undefined, onChange: (e: Event) => set("channel_id", valueOf(e)) },
          h("option", { value: "" }, "No channel"),
          ...channelOptions.map((c) => h("option", { key: c.id, value: c.id }, c.name)))),
      h(Checks, { path: "fwd_channel_ids", legend: "Forward submissions to", options: channelOptions, value: draft.fwd_channel_ids, onChange: (v) => set("fwd_channel_ids", v), errors }),
      h(Checks, { path: "role_mentions", legend: "Roles mentioned on a submission", options: roleOptions, value: draft.role_mentions, onChange: (v) => set("role_mentions", v), errors }),
      h(Checks, { path: "public_mentions", legend: "Roles mentioned publicly", options: roleOptions, value: draft.public_mentions, onChange: (v) => set("public_mentions", v), errors })),
    h("section", { "aria-labelledby": "sec-options" },
      h("h2", { id: "sec-options" }, "Options"),
      h("div", { class: "flags" }, ...FORM_FLAGS.map((f) =>
        h("div", { key: f },
          h("label", { class: "check" },
            h("input", { id: idOf(f), type: "checkbox", checked: draft.flags[f], ...invalid(f, errors), onChange: (e) => set("flags", { ...draft.flags, [f]: e.currentTarget.checked } as Record<FormFlag, boolean>) }),
            " ", FLAG_LABELS[f]),
          h(ErrorText, { path: f, errors })))),
      h(Field, { path: "taskboard_board", label: "Task board", errors },
        h("select", { id: idOf("taskboard_board"), value: draft.taskboard_board, ...invalid("taskboard_board", errors), onChange: (e: Event) => set("taskboard_board", valueOf(e)) },
          ...boardChoices.map((b) => h("option", { key: b.id, value: b.id }, b.name))))),
    h("section", { "aria-labelledby": "sec-steps" },
      h("h2", { id: "sec-steps" }, `Steps (${draft.steps.length})`),
      h(ErrorText, { path: "steps", errors }),
      h("p", { role: "status", class: "notice-line" }, status),
      h("ol", { class: "steps" }, ...draft.steps.map((s, i) => {
        const at = (f: string) => `steps[${i}]${f}`
        return h("li", { key: String(s.key) },
          h("fieldset", { class: "step", id: idOf(at("")) },
            h("legend", null, `Step ${i + 1}`),
            h(ErrorText, { path: at(""), errors }),
            h("div", { class: "step-grid" },
              h(Field, { path: at(".type"), label: "Type", errors },
                h("select", { id: idOf(at(".type")), value: s.type, ...invalid(at(".type"), errors), onChange: (e: Event) => setStep(i, { type: valueOf(e) === "reaction" ? "reaction" : "message" }) },
                  h("option", { value: "message" }, "Message (a written answer)"),
                  h("option", { value: "reaction" }, "Reaction (pick an answer)"))),
              h(Field, { path: at(".alias"), label: "Alias", errors },
                h("input", { id: idOf(at(".alias")), type: "text", value: s.alias, maxLength: 256, ...invalid(at(".alias"), errors), onInput: (e: Event) => setStep(i, { alias: valueOf(e) }) })),
              h(Field, { path: at(".taskboard_mapping"), label: "Task-board field", errors },
                h("select", { id: idOf(at(".taskboard_mapping")), value: s.taskboard_mapping, ...invalid(at(".taskboard_mapping"), errors), onChange: (e: Event) => setStep(i, { taskboard_mapping: valueOf(e) }) },
                  h("option", { value: "" }, "Not mapped"),
                  ...options.map((o) => h("option", { key: o, value: o }, o))))),
            h(Field, { path: at(".string"), label: "Question", errors },
              h("textarea", { id: idOf(at(".string")), rows: 2, value: s.string, maxLength: 2000, ...invalid(at(".string"), errors), onInput: (e: Event) => setStep(i, { string: valueOf(e) }) })),
            h(Field, { path: at(".answers_validation"), label: "Answers, one per line", hint: s.type === "reaction" ? "A reaction step needs 1 to 20 answers." : "Optional: the accepted answers.", errors },
              h("textarea", { id: idOf(at(".answers_validation")), rows: 3, value: s.answers, ...invalid(at(".answers_validation"), errors), onInput: (e: Event) => setStep(i, { answers: valueOf(e) }) })),
            h("fieldset", { class: "limits", id: idOf(at(".char_limit")), ...invalid(at(".char_limit"), errors) },
              h("legend", null, "Answer length (characters)"),
              h("label", null, "Minimum ", h("input", { type: "number", min: 1, max: 2000, value: s.min, onInput: (e: Event) => setStep(i, { min: valueOf(e) }) })),
              h("label", null, "Maximum ", h("input", { type: "number", min: 1, max: 2000, value: s.max, onInput: (e: Event) => setStep(i, { max: valueOf(e) }) })),
              h(ErrorText, { path: at(".char_limit"), errors })),
            h("div", { class: "step-actions" },
              h("button", { type: "button", class: "secondary", disabled: i === 0, "aria-label": `Move step ${i + 1} up`, onClick: () => move(i, -1) }, "↑ Up"),
              h("button", { type: "button", class: "secondary", disabled: i === draft.steps.length - 1, "aria-label": `Move step ${i + 1} down`, onClick: () => move(i, 1) }, "↓ Down"),
              h("button", {
                type: "button",
                class: "danger",
                "aria-label": `Remove step ${i + 1}`,
                onClick: () => {
                  setProblems([])
                  setDraft((d) => ({ ...d, steps: d.steps.filter((_, j) => j !== i) }))
                  setStatus(`Removed step ${i + 1}.`)
                }
              }, "Remove"))))
      })),
      h("button", {
        type: "button",
        class: "secondary",
        disabled: draft.steps.length >= 25,
        onClick: () => {
          setDraft((d) => ({ ...d, steps: [...d.steps, newStep()] }))
          setStatus(`Added step ${draft.steps.length + 1}.`)
        }
      }, "Add a step")),
    h("div", { class: "form-actions" },
      h("button", { type: "submit", disabled: busy }, busy ? "Saving…" : props.formId === undefined ? "Create the form" : "Save changes"),
      h("a", { class: "button secondary", href: props.base }, "Back to the forms"),
      dirty ? h("span", { class: "muted" }, "Unsaved changes") : null))
}
