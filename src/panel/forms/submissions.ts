/**
 * A form's submissions (forms-runtime.md §6): the list (filtered by status, paged), one submission
 * with its answers and effects, and its review: Pass (with a priority unless the form has none) or
 * Drop with an optional reason.
 */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { FormId } from "../../http/client.ts"
import type { SubmissionDetail } from "../../http/client.ts"
import { crumbs, paramsOf } from "./formList.ts"
import { valueOf } from "../fields.ts"
import type { Failure } from "../problems.ts"
import { navigate } from "../router.ts"
import { call } from "../session.ts"
import { ErrorBox, Page, Pager, show, useLoad, when } from "../ui.ts"

const PAGE_SIZE = 20
const STATUS_LABEL = { pending: "Awaiting review", accepted: "Accepted", denied: "Denied" } as const
const EFFECT_LABEL = { review_message: "Review message", dm: "Direct message to the member", summary: "Public summary", card: "Task-board card" } as const
const STATE_LABEL = { pending: "Pending", done: "Done", failed: "Failed" } as const

const formParams = (bot: string, server: string, form: string) => ({ ...paramsOf(bot, server), formId: FormId.make(Number(form)) })

export const SubmissionsList = (props: { readonly bot: string; readonly server: string; readonly form: string; readonly search: string }) => {
  const params = formParams(props.bot, props.server, props.form)
  const base = `/app/bots/${props.bot}/servers/${props.server}/forms`
  const here = `${base}/${props.form}/submissions`
  const q = new URLSearchParams(props.search)
  const status = q.get("status") ?? ""
  const page = Math.max(1, Number(q.get("page") ?? "1") || 1)
  const [data, reload] = useLoad(`submissions:${here}?${props.search}`, () =>
    call((c) =>
      Effect.all({
        server: c.general.server({ params }),
        form: c.forms.get({ params }),
        list: c.submissions.list({ params, query: { ...(status === "" ? {} : { status }), page: String(page), page_size: String(PAGE_SIZE) } })
      })))
  const hrefOf = (s: string, p: number) => {
    const search = new URLSearchParams()
    if (s !== "") search.set("status", s)
    if (p > 1) search.set("page", String(p))
    const text = search.toString()
    return `${here}${text === "" ? "" : `?${text}`}`
  }
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  return h(Page, {
    title: data.kind === "ok" ? `Submissions of “${data.value.form.title}”` : "Submissions",
    crumbs: [...crumbs(props.bot, props.server, name), { label: "Forms", href: base }, { label: "Submissions" }],
    actions: h("a", { class: "button secondary", href: `${base}/${props.form}/publish` }, "Publish")
  },
  h("form", { class: "filters", "aria-label": "Filter the submissions", onSubmit: (e: Event) => e.preventDefault() },
    h("div", { class: "field" },
      h("label", { for: "submissions-status" }, "Status"),
      h("select", { id: "submissions-status", value: status, onChange: (e: Event) => navigate(hrefOf(valueOf(e), 1)) },
        h("option", { value: "" }, "All"),
        ...Object.entries(STATUS_LABEL).map(([k, label]) => h("option", { key: k, value: k }, label))))),
  show(data, "the submissions", reload, ({ list }) =>
    h("div", null,
      h("p", { role: "status", class: "muted" },
        list.submissions.length === 0 ? (page > 1 ? "No submission on this page." : "No submission matches this filter.") : `Page ${list.page} of ${Math.max(1, list.page_max)}.`),
      list.submissions.length === 0 ? null : h("div", { class: "table-wrap" },
        h("table", null,
          h("caption", { class: "visually-hidden" }, "Submissions, newest first"),
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, "Submission"),
            h("th", { scope: "col" }, "Member"),
            h("th", { scope: "col" }, "Received"),
            h("th", { scope: "col" }, "Status"),
            h("th", { scope: "col" }, "Reviewed by"))),
          h("tbody", null, ...list.submissions.map((s) =>
            h("tr", { key: s.id },
              h("th", { scope: "row" }, h("a", { href: `${here}/${s.id}` }, `#${s.id}`)),
              h("td", null, s.user_name),
              h("td", null, when(s.created_at)),
              h("td", null, STATUS_LABEL[s.status], s.priority === null ? "" : ` — priority ${s.priority}`),
              h("td", null, s.reviewer_name ?? "—")))))),
      h(Pager, { page: list.page, pageMax: list.page_max, href: (p) => hrefOf(status, p) }))))
}

const Review = (props: { readonly detail: SubmissionDetail; readonly priorities: boolean; readonly submit: (body: { decision: "pass" | "drop"; priority?: "low" | "medium" | "high"; reason?: string }) => Promise<void> }) => {
  const [priority, setPriority] = useState<"low" | "medium" | "high">("medium")
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const go = async (body: Parameters<typeof props.submit>[0]) => {
    setBusy(true)
    await props.submit(body)
    setBusy(false)
  }
  return h("section", { class: "review", "aria-labelledby": "review-heading" },
    h("h2", { id: "review-heading" }, "Review"),
    h("div", { class: "filters" },
      props.priorities
        ? h("div", { class: "field" },
          h("label", { for: "review-priority" }, "Priority"),
          h("select", { id: "review-priority", value: priority, onChange: (e: Event) => setPriority(valueOf(e) as "low" | "medium" | "high") },
            h("option", { value: "low" }, "Low"), h("option", { value: "medium" }, "Medium"), h("option", { value: "high" }, "High")))
        : null,
      h("div", { class: "form-actions" },
        h("button", { type: "button", disabled: busy, onClick: () => void go(props.priorities ? { decision: "pass", priority } : { decision: "pass" }) }, "Pass"))),
    h("div", { class: "field" },
      h("label", { for: "review-reason" }, "Reason (optional, sent to the member with the decision)"),
      h("textarea", { id: "review-reason", maxLength: 1000, rows: 3, value: reason, onInput: (e: Event) => setReason(valueOf(e)) })),
    h("div", { class: "form-actions" },
      h("button", { type: "button", class: "danger", disabled: busy, onClick: () => void go(reason.trim() === "" ? { decision: "drop" } : { decision: "drop", reason }) }, "Drop")))
}

export const SubmissionView = (props: { readonly bot: string; readonly server: string; readonly form: string; readonly submission: string }) => {
  const params = { ...formParams(props.bot, props.server, props.form), submissionId: props.submission }
  const base = `/app/bots/${props.bot}/servers/${props.server}/forms`
  const [data, reload] = useLoad(`submission:${base}/${props.form}/${props.submission}`, () =>
    call((c) => Effect.all({ server: c.general.server({ params }), form: c.forms.get({ params }), detail: c.submissions.get({ params }) })))
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [status, setStatus] = useState("")
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const submit = async (body: { decision: "pass" | "drop"; priority?: "low" | "medium" | "high"; reason?: string }) => {
    const answer = await call((c) => c.submissions.review({ params, payload: body }))
    if (Result.isFailure(answer)) {
      setFailure(answer.failure)
      reload()
      return
    }
    setFailure(undefined)
    setStatus(body.decision === "pass" ? "Passed: the member gets a direct message." : "Dropped: the member gets a direct message.")
    reload()
  }
  return h(Page, {
    title: `Submission #${props.submission}`,
    crumbs: [...crumbs(props.bot, props.server, name), { label: "Forms", href: base }, { label: "Submissions", href: `${base}/${props.form}/submissions` }, { label: `#${props.submission}` }]
  },
  h("p", { role: "status", class: "notice-line" }, status),
  failure === undefined ? null : h(ErrorBox, { failure }),
  show(data, "the submission", reload, ({ detail, form, server }) => {
    const channel = (id: string) => `#${server.channels.find((c) => c.id === id)?.name ?? id}`
    return h("div", null,
      h("dl", { class: "facts" },
        h("dt", null, "Form"), h("dd", null, form.title),
        h("dt", null, "Member"), h("dd", null, `${detail.user_name} (${detail.user_id})`),
        h("dt", null, "Received"), h("dd", null, when(detail.created_at)),
        h("dt", null, "Status"), h("dd", null, STATUS_LABEL[detail.status], detail.priority === null ? "" : ` — priority ${detail.priority}`),
        detail.reviewer_name === null ? null : [h("dt", null, "Reviewed by"), h("dd", null, `${detail.reviewer_name}, ${when(detail.reviewed_at)}`)],
        detail.reason === null ? null : [h("dt", null, "Reason"), h("dd", null, detail.reason)],
        h("dt", null, "Votes"), h("dd", null, `▲ ${detail.votes.up} · ▼ ${detail.votes.down}`),
        detail.card_url === null ? null : [h("dt", null, "Task-board card"), h("dd", null, h("a", { href: detail.card_url, rel: "noopener noreferrer", target: "_blank" }, detail.card_url))]),
      h("h2", null, "Answers"),
      h("dl", { class: "answers" }, ...detail.answers.flatMap((a) => [
        h("dt", { key: `q${a.step_id}` }, a.alias ?? a.question, a.private ? h("span", { class: "badge" }, "private") : null),
        h("dd", { key: `a${a.step_id}` }, a.answer === "" ? h("span", { class: "muted" }, "(no answer)") : a.answer)
      ])),
      h("h2", null, "Effects"),
      detail.effects.length === 0 ? h("p", null, "Nothing sent yet.") : h("ul", { class: "effects" }, ...detail.effects.map((e) =>
        h("li", { key: e.kind },
          h("strong", null, EFFECT_LABEL[e.kind]), `: ${STATE_LABEL[e.state]}`,
          e.channel_id === null ? "" : ` (in ${channel(e.channel_id)}${e.message_id === null ? "" : `, message ${e.message_id}`})`,
          e.reason === null ? null : h("span", { class: "why" }, ` — ${e.reason}`)))),
      detail.status === "pending" ? h(Review, { detail, priorities: !form.disable_priorities, submit }) : null)
  }))
}
