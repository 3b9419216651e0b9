/** The editor of every field of a form (gateway-api.md "Forms"); the steps are formSteps.ts. */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result, Schema } from "effect"
import { FORM_FLAGS, FormId, FormInput } from "../../http/client.ts"
import type { Board, Form, FormFlag, Server } from "../../http/client.ts"
import type { Draft } from "./formDraft.ts"
import { bodyOf, draftOf, FLAG_LABELS } from "./formDraft.ts"
import { boardChoices, shownBoard, teamPaired } from "./formBoards.ts"
import { crumbs, paramsOf } from "./formList.ts"
import { StepsEditor } from "./formSteps.ts"
import type { Errors } from "../fields.ts"
import { ErrorText, errorsOf, Field, idOf, invalid, SaveProblems, useProblems, useSaveGuards, valueOf } from "../fields.ts"
import { toFailure } from "../problems.ts"
import { navigate } from "../router.ts"
import { call } from "../session.ts"
import { Page, show, StatusLine, useLoad } from "../ui.ts"

/** What the editor says after creating a form, shown by the editor of the created form. */
let carried = ""

const Checks = (props: {
  readonly path: string
  readonly legend: string
  readonly options: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly value: ReadonlyArray<string>
  readonly onChange: (next: ReadonlyArray<string>) => void
  readonly errors: Errors
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
  const draftFor = (form: Form): Draft => ({ ...draftOf(form), taskboard_board: shownBoard(form.taskboard_board, boards) })
  const [draft, setDraft] = useState<Draft>(() => draftFor(props.data.form))
  const [saved, setSaved] = useState<Draft>(draft)
  const [busy, setBusy] = useState(false)
  // What a save did, by the save button (Created is carried from the new form's editor); what a step change did.
  const [status, setStatus] = useState(() => {
    const said = carried
    carried = ""
    return said
  })
  const [stepStatus, setStepStatus] = useState("")
  const dirty = JSON.stringify(draft) !== JSON.stringify(saved)

  const postable = server.channels.filter((c) => c.type === "GuildText" || c.type === "GuildNews")
  const channelOptions = postable.map((c) => ({ id: c.id, name: `#${c.name}` }))
  const roleOptions = server.roles.map((r) => ({ id: r.id, name: r.name.startsWith("@") ? r.name : `@${r.name}` }))
  const known = new Set<string>([
    "title", "color_hex", "channel_id", "fwd_channel_ids", "role_mentions", "public_mentions", "taskboard_board", "steps", ...FORM_FLAGS,
    ...draft.steps.flatMap((_, i) => ["", ".type", ".string", ".answers_validation", ".char_limit", ".alias", ".taskboard_mapping"].map((f) => `steps[${i}]${f}`))
  ])
  const { problems, setProblems, failure, setFailure, fixed } = useProblems(known)
  const errors = errorsOf(problems, known)
  const summary = useSaveGuards("form", failure, dirty)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    fixed(key)
    setDraft((d) => ({ ...d, [key]: value }))
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setStatus("")
    setStepStatus("")
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
    const next = draftFor(answer.success)
    setDraft(next)
    setSaved(next)
    if (props.formId === undefined) {
      carried = `Created the form “${answer.success.title}”.`
      navigate(`${props.base}/${answer.success.workflow_id}`, { replace: true, force: true })
    } else setStatus(`Saved the form “${answer.success.title}”.`)
  }

  return h("form", { class: "editor", onSubmit: save, noValidate: true },
    failure === undefined ? null : h(SaveProblems, { what: "form", failure, problems, known, summary }),
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
            h("input", {
              id: idOf(f),
              type: "checkbox",
              checked: draft.flags[f],
              ...invalid(f, errors),
              onChange: (e) => {
                fixed(f)
                set("flags", { ...draft.flags, [f]: e.currentTarget.checked } as Record<FormFlag, boolean>)
              }
            }),
            " ", FLAG_LABELS[f]),
          h(ErrorText, { path: f, errors })))),
      h(Field, { path: "taskboard_board", label: "Task board", errors, ...(teamPaired(boards) ? {} : { hint: "Pair a task-board team with this server to choose a board." }) },
        h("select", { id: idOf("taskboard_board"), value: draft.taskboard_board, ...invalid("taskboard_board", errors), onChange: (e: Event) => set("taskboard_board", valueOf(e)) },
          ...boardChoices(draft.taskboard_board, boards).map((b) => h("option", { key: b.id, value: b.id }, b.name))))),
    h(StepsEditor, {
      steps: draft.steps,
      errors,
      options,
      status: stepStatus,
      say: setStepStatus,
      change: (f) => setDraft((d) => ({ ...d, steps: f(d.steps) })),
      clearProblems: () => setProblems([]),
      fixed
    }),
    h(StatusLine, { text: status }),
    h("div", { class: "form-actions" },
      h("button", { type: "submit", disabled: busy }, busy ? "Saving…" : props.formId === undefined ? "Create the form" : "Save changes"),
      h("a", { class: "button secondary", href: props.base }, "Back to the forms"),
      dirty ? h("span", { class: "muted" }, "Unsaved changes") : null))
}
