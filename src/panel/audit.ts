/** The audit log of a server (gateway-api.md "Audit logs"): module and time-range filters, paging. */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect } from "effect"
import { BotId, ServerId } from "../http/client.ts"
import { actionOf } from "./auditAction.ts"
import { FEED_MODULES, MODULE_LABEL } from "./feeds/feedCommon.ts"
import { valueOf } from "./fields.ts"
import { navigate } from "./router.ts"
import { call } from "./session.ts"
import { Page, Pager, show, useLoad, when } from "./ui.ts"

const PAGE_SIZE = 20

/** `2024-05-01T12:00` (an <input type=datetime-local>, local time) ⇄ a UTC ISO instant. */
const toIso = (local: string) => (local === "" ? "" : new Date(local).toISOString())
const toLocal = (iso: string) => {
  if (iso === "") return ""
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ""
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

export const AuditLog = (props: { readonly bot: string; readonly server: string; readonly search: string }) => {
  const params = { appClientId: BotId.make(props.bot), serverId: ServerId.make(props.server) }
  const base = `/app/bots/${props.bot}/servers/${props.server}`
  const q = new URLSearchParams(props.search)
  const filter = { module: q.get("module") ?? "", start: q.get("start") ?? "", end: q.get("end") ?? "" }
  const page = Math.max(1, Number(q.get("page") ?? "1") || 1)
  const [data, reload] = useLoad(`audit:${base}?${props.search}`, () =>
    call((c) =>
      Effect.all({
        server: c.general.server({ params }),
        logs: c.general.logs({
          params,
          query: {
            ...(filter.module === "" ? {} : { module: filter.module }),
            ...(filter.start === "" ? {} : { start: filter.start }),
            ...(filter.end === "" ? {} : { end: filter.end }),
            page: String(page),
            page_size: String(PAGE_SIZE)
          }
        })
      })))
  const [draft, setDraft] = useState({ module: filter.module, start: toLocal(filter.start), end: toLocal(filter.end) })
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const hrefOf = (f: { readonly module: string; readonly start: string; readonly end: string }, p: number) => {
    const s = new URLSearchParams()
    if (f.module !== "") s.set("module", f.module)
    if (f.start !== "") s.set("start", f.start)
    if (f.end !== "") s.set("end", f.end)
    if (p > 1) s.set("page", String(p))
    const text = s.toString()
    return `${base}/audit${text === "" ? "" : `?${text}`}`
  }
  return h(Page, {
    title: `Audit log of ${name}`,
    crumbs: [{ label: "Bots", href: "/app" }, { label: "Servers", href: `/app/bots/${props.bot}` }, { label: name, href: base }, { label: "Audit log" }]
  },
  h("form", {
    class: "filters",
    "aria-label": "Filter the audit log",
    onSubmit: (e: Event) => {
      e.preventDefault()
      navigate(hrefOf({ module: draft.module, start: toIso(draft.start), end: toIso(draft.end) }, 1))
    }
  },
  h("div", { class: "field" },
    h("label", { for: "audit-module" }, "Module"),
    h("select", { id: "audit-module", value: draft.module, onChange: (e: Event) => setDraft((d) => ({ ...d, module: valueOf(e) })) },
      h("option", { value: "" }, "All modules"),
      h("option", { value: "forms" }, "Forms"),
      ...FEED_MODULES.map((m) => h("option", { key: m, value: m }, `${MODULE_LABEL[m]} feeds`)))),
  h("div", { class: "field" },
    h("label", { for: "audit-start" }, "From"),
    h("input", { id: "audit-start", type: "datetime-local", value: draft.start, onInput: (e: Event) => setDraft((d) => ({ ...d, start: valueOf(e) })) })),
  h("div", { class: "field" },
    h("label", { for: "audit-end" }, "Until"),
    h("input", { id: "audit-end", type: "datetime-local", value: draft.end, onInput: (e: Event) => setDraft((d) => ({ ...d, end: valueOf(e) })) })),
  h("div", { class: "form-actions" },
    h("button", { type: "submit" }, "Apply the filters"),
    h("a", { class: "button secondary", href: `${base}/audit` }, "Clear"))),
  show(data, "the audit log", reload, ({ logs }) =>
    h("div", null,
      h("p", { role: "status", class: "muted" },
        logs.logs.length === 0 ? (page > 1 ? "No entry on this page." : "No entry matches these filters.") : `Page ${logs.page} of ${Math.max(1, logs.page_max)}.`),
      logs.logs.length === 0 ? null : h("div", { class: "table-wrap" },
        h("table", null,
          h("caption", { class: "visually-hidden" }, "Audit log entries, newest first"),
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, "When"),
            h("th", { scope: "col" }, "Who"),
            h("th", { scope: "col" }, "Module"),
            h("th", { scope: "col" }, "Action"),
            h("th", { scope: "col" }, "What"))),
          h("tbody", null, ...logs.logs.map((l) =>
            h("tr", { key: l.id },
              h("td", null, when(l.timestamp)),
              h("td", null, l.user_name),
              h("td", null, l.module_name),
              h("td", null, actionOf(l.event_type, l.event_string)),
              h("td", null, l.event_string)))))),
      h(Pager, { page: logs.page, pageMax: logs.page_max, href: (p) => hrefOf(filter, p) }))))
}
