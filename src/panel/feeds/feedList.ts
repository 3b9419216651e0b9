/** The feeds of one module on a server, each with its status (active / failing / disabled and why). */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { FeedId } from "../../http/client.ts"
import type { Feed, FeedModuleName } from "../../http/client.ts"
import { channelName, crumbsOf, feedName, group, MODULE_LABEL, paramsOf, serverBase, StatusBadge, takeCarried } from "./feedCommon.ts"
import type { Failure } from "../problems.ts"
import { call } from "../session.ts"
import { ErrorBox, Page, show, StatusLine, useLoad, when } from "../ui.ts"

export const FeedsList = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName }) => {
  const params = paramsOf(props.bot, props.server)
  const m = props.module
  const base = `${serverBase(props.bot, props.server)}/feeds/${m}`
  const [data, reload] = useLoad(`feeds:${base}`, () =>
    call((c) =>
      Effect.gen(function*() {
        const g = group(c, m)
        const [server, { feeds }] = yield* Effect.all([c.general.server({ params }), g.list({ params })], { concurrency: 2 })
        const statuses = yield* Effect.forEach(feeds, (f) =>
          Effect.option(g.status({ params: { ...params, feedId: FeedId.make(f.id) } })), { concurrency: 4 })
        return { server, feeds: feeds.map((f, i) => ({ feed: f, status: statuses[i]!._tag === "Some" ? statuses[i]!.value : undefined })) }
      })))
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [status, setStatus] = useState(takeCarried)
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const remove = async (f: Feed) => {
    if (!confirm(`Delete the ${MODULE_LABEL[m]} feed “${feedName(f)}”? It stops posting at once.`)) return
    const answer = await call((c) => group(c, m).delete({ params: { ...params, feedId: FeedId.make(f.id) } }))
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else {
      setFailure(undefined)
      setStatus(`Deleted the feed “${feedName(f)}”.`)
      reload()
    }
  }
  return h(Page, {
    title: `${MODULE_LABEL[m]} feeds on ${name}`,
    crumbs: [...crumbsOf(props.bot, props.server, name), { label: `${MODULE_LABEL[m]} feeds` }],
    actions: h("a", { class: "button", href: `${base}/new` }, "New feed")
  },
  h(StatusLine, { text: status }),
  failure === undefined ? null : h(ErrorBox, { failure }),
  show(data, "the feeds", reload, ({ feeds, server }) =>
    feeds.length === 0
      ? h("p", null, `This server has no ${MODULE_LABEL[m]} feed yet.`)
      : h("div", { class: "table-wrap" },
        h("table", null,
          h("caption", { class: "visually-hidden" }, `${MODULE_LABEL[m]} feeds of this server`),
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, "Source"),
            h("th", { scope: "col" }, "Posts to"),
            h("th", { scope: "col" }, "Status"),
            h("th", { scope: "col" }, "Last post"),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
          h("tbody", null, ...feeds.map(({ feed, status }) =>
            h("tr", { key: feed.id },
              h("th", { scope: "row" }, h("a", { href: `${base}/${feed.id}` }, feedName(feed))),
              h("td", null, `${channelName(server, feed.webhook_info.channel_id)} (webhook “${feed.webhook_info.name}”)`),
              h("td", null, h(StatusBadge, { status })),
              h("td", null, status === undefined ? "—" : when(status.last_delivery_at)),
              h("td", { class: "actions" },
                h("a", { href: `${base}/${feed.id}`, "aria-label": `Edit ${feedName(feed)}` }, "Edit"),
                h("a", { href: `${base}/${feed.id}/deliveries`, "aria-label": `Delivery log of ${feedName(feed)}` }, "Log"),
                h("button", { type: "button", class: "danger", "aria-label": `Delete ${feedName(feed)}`, onClick: () => void remove(feed) }, "Delete")))))))))
}
