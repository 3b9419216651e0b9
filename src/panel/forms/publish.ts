/**
 * Publishing a form (forms-runtime.md §2): post its start message in a text or news channel of the
 * server (picked from the server's channels), and the form's publications, each deletable.
 */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { FormId } from "../../http/client.ts"
import { crumbs, paramsOf } from "./formList.ts"
import { valueOf } from "../fields.ts"
import type { Failure } from "../problems.ts"
import { call } from "../session.ts"
import { ErrorBox, Page, show, useLoad, when } from "../ui.ts"

/** Text and news channels take a start message. */
const PUBLISHABLE: ReadonlyArray<string> = ["GuildText", "GuildNews"]

export const PublishForm = (props: { readonly bot: string; readonly server: string; readonly form: string }) => {
  const params = { ...paramsOf(props.bot, props.server), formId: FormId.make(Number(props.form)) }
  const base = `/app/bots/${props.bot}/servers/${props.server}/forms`
  const [data, reload] = useLoad(`publish:${base}/${props.form}`, () =>
    call((c) =>
      Effect.all({
        server: c.general.server({ params }),
        form: c.forms.get({ params }),
        publications: c.submissions.publications({ params })
      })))
  const [channel, setChannel] = useState("")
  const [busy, setBusy] = useState(false)
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [status, setStatus] = useState("")
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const channelName = (id: string) => data.kind === "ok" ? data.value.server.channels.find((c) => c.id === id)?.name ?? id : id

  const publish = async (e: Event) => {
    e.preventDefault()
    if (channel === "") return
    setBusy(true)
    const answer = await call((c) => c.submissions.publish({ params, payload: { channel_id: channel } }))
    setBusy(false)
    if (Result.isFailure(answer)) return setFailure(answer.failure)
    setFailure(undefined)
    setStatus(`Published in #${channelName(answer.success.channel_id)}.`)
    reload()
  }
  const remove = async (messageId: string, channelId: string) => {
    if (!confirm(`Delete the start message in #${channelName(channelId)}?`)) return
    const answer = await call((c) => c.submissions.unpublish({ params: { ...params, messageId } }))
    if (Result.isFailure(answer)) return setFailure(answer.failure)
    setFailure(undefined)
    setStatus(`Deleted the start message in #${channelName(channelId)}.`)
    reload()
  }

  const title = data.kind === "ok" ? `Publish “${data.value.form.title}”` : "Publish a form"
  return h(Page, {
    title,
    crumbs: [...crumbs(props.bot, props.server, name), { label: "Forms", href: base }, { label: "Publish" }],
    actions: h("a", { class: "button secondary", href: `${base}/${props.form}/submissions` }, "Submissions")
  },
  h("p", { role: "status", class: "notice-line" }, status),
  failure === undefined ? null : h(ErrorBox, { failure }),
  show(data, "the form and its publications", reload, ({ server, publications }) => {
    const channels = server.channels.filter((c) => PUBLISHABLE.includes(c.type))
    return h("div", null,
      h("form", { class: "filters", "aria-label": "Publish the form", onSubmit: (e: Event) => void publish(e) },
        h("div", { class: "field" },
          h("label", { for: "publish-channel" }, "Channel"),
          h("select", { id: "publish-channel", value: channel, onChange: (e: Event) => setChannel(valueOf(e)) },
            h("option", { value: "" }, "Choose a channel"),
            ...channels.map((c) => h("option", { key: c.id, value: c.id }, `#${c.name}${c.type === "GuildNews" ? " (news)" : ""}`)))),
        h("div", { class: "form-actions" },
          h("button", { type: "submit", disabled: busy || channel === "" }, busy ? "Publishing…" : "Publish"))),
      h("p", { class: "muted" }, "The bot posts a message with the form's title and a Start button; members press it to fill the form."),
      h("h2", null, "Publications"),
      publications.publications.length === 0
        ? h("p", null, "This form is not published anywhere yet.")
        : h("div", { class: "table-wrap" },
          h("table", null,
            h("caption", { class: "visually-hidden" }, "Start messages of this form, newest first"),
            h("thead", null, h("tr", null,
              h("th", { scope: "col" }, "Channel"),
              h("th", { scope: "col" }, "Message"),
              h("th", { scope: "col" }, "Published"),
              h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
            h("tbody", null, ...publications.publications.map((p) =>
              h("tr", { key: p.message_id },
                h("th", { scope: "row" }, `#${channelName(p.channel_id)}`),
                h("td", null, p.message_id),
                h("td", null, when(p.created_at)),
                h("td", { class: "actions" },
                  h("button", {
                    type: "button",
                    class: "danger",
                    "aria-label": `Delete the start message in #${channelName(p.channel_id)}`,
                    onClick: () => void remove(p.message_id, p.channel_id)
                  }, "Delete"))))))))
  }))
}
