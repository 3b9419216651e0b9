/** The forms module: the forms of a server (gateway-api.md "Forms"); the editor is formEditor.ts. */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { BotId, FormId, ServerId } from "../../http/client.ts"
import type { Failure } from "../problems.ts"
import { call } from "../session.ts"
import { ErrorBox, Page, show, StatusLine, useLoad } from "../ui.ts"

export const paramsOf = (bot: string, server: string) => ({ appClientId: BotId.make(bot), serverId: ServerId.make(server) })
export const crumbs = (bot: string, server: string, name: string) => [
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
  h(StatusLine, { text: status }),
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
                h("a", { href: `${base}/${f.workflow_id}/submissions`, "aria-label": `Submissions of ${f.title}` }, "Submissions"),
                h("a", { href: `${base}/${f.workflow_id}/publish`, "aria-label": `Publish ${f.title}` }, "Publish"),
                h("button", { type: "button", class: "danger", "aria-label": `Delete ${f.title}`, onClick: () => void remove(f.workflow_id, f.title) }, "Delete")))))))))
}
