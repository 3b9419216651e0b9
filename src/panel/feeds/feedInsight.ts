/**
 * What a feed does (delivery.md §5 and §8): its status with the actions (a test message, a poll now),
 * the preview with reasons, and the delivery log.
 */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import type { Feed, FeedModuleName, FeedStatus, Server, TestMessageResult } from "../../http/client.ts"
import { carry, channelName, crumbsOf, feedName, feedParams, group, MODULE_LABEL, serverBase, StatusBadge } from "./feedCommon.ts"
import { loadPreview, PreviewItems, settingOf, TestMessage } from "./feedMessages.ts"
import type { TestSent } from "./feedMessages.ts"
import type { Failure } from "../problems.ts"
import { navigate } from "../router.ts"
import { call } from "../session.ts"
import { ErrorBox, Page, Pager, show, StatusLine, useLoad, when } from "../ui.ts"

/** The feed's status and its actions: test message, poll now, preview, delivery log, delete. */
export const FeedSummary = (props: {
  readonly feed: Feed
  readonly status: FeedStatus
  readonly server: Server
  readonly base: string
  readonly bot: string
  readonly serverId: string
  readonly module: FeedModuleName
  readonly reload: () => void
}) => {
  const s = props.status
  const [said, setSaid] = useState("")
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const [sent, setSent] = useState<TestSent | undefined>(undefined)
  const fp = feedParams(props.bot, props.serverId, props.feed.id)
  const act = async (what: "test" | "refresh") => {
    setBusy(true)
    setSaid("")
    setFailure(undefined)
    const answer = await call((c) => what === "test" ? group(c, props.module).test({ params: fp }) : group(c, props.module).refresh({ params: fp }))
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else if (what === "refresh") setSaid("The source is being polled now; new items follow in the delivery log.")
    else {
      setSaid("Sent a test message with the source's newest item.")
      const messageId = (answer.success as TestMessageResult).message_id
      const shown = await call((c) => group(c, props.module).preview({ params: fp }))
      setSent({ messageId, shown: Result.isFailure(shown) ? { failure: shown.failure } : { item: shown.success.items[0] } })
    }
    setBusy(false)
  }
  const remove = async () => {
    if (!confirm(`Delete the ${MODULE_LABEL[props.module]} feed “${feedName(props.feed)}”? It stops posting at once.`)) return
    const answer = await call((c) => group(c, props.module).delete({ params: fp }))
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else {
      carry(`Deleted the feed “${feedName(props.feed)}”.`)
      navigate(props.base.replace(/\/[^/]+$/, ""), { force: true })
    }
  }
  return h("section", { class: "summary", "aria-labelledby": "sec-status" },
    h("h2", { id: "sec-status" }, "Status"),
    h("dl", { class: "facts" },
      h("dt", null, "Source"), h("dd", null, props.feed.feed_identifier),
      h("dt", null, "Posts to"), h("dd", null, `${channelName(props.server, props.feed.webhook_info.channel_id)} (webhook “${props.feed.webhook_info.name}”)`),
      h("dt", null, "State"), h("dd", null, h(StatusBadge, { status: s })),
      h("dt", null, "Last poll"), h("dd", null, when(s.last_poll_at, "not yet")),
      h("dt", null, "Next poll"), h("dd", null, when(s.next_poll_at, "not planned")),
      h("dt", null, "Last post"), h("dd", null, when(s.last_delivery_at)),
      h("dt", null, "Posted / skipped"), h("dd", null, `${s.delivered} / ${s.skipped}`)),
    h("div", { class: "form-actions" },
      h("a", { class: "button secondary", href: `${props.base}/preview` }, "Preview"),
      h("a", { class: "button secondary", href: `${props.base}/deliveries` }, "Delivery log"),
      h("button", { type: "button", class: "secondary", disabled: busy, onClick: () => void act("test") }, "Send a test message"),
      h("button", { type: "button", class: "secondary", disabled: busy, onClick: () => void act("refresh") }, "Poll now"),
      h("button", { type: "button", class: "secondary", onClick: props.reload }, "Reload the status"),
      h("button", { type: "button", class: "danger", onClick: () => void remove() }, "Delete the feed")),
    h(StatusLine, { text: said }),
    failure === undefined ? null : h(ErrorBox, { failure }),
    sent === undefined ? null : h(TestMessage, { sent, setting: settingOf(props.feed, props.server) }))
}

const insightPage = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName; readonly feed: string }, what: string) => {
  const base = `${serverBase(props.bot, props.server)}/feeds/${props.module}`
  return {
    base,
    crumbs: (name: string) => [
      ...crumbsOf(props.bot, props.server, name),
      { label: `${MODULE_LABEL[props.module]} feeds`, href: base },
      { label: "Feed", href: `${base}/${props.feed}` },
      { label: what }
    ]
  }
}

export const FeedPreviewScreen = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName; readonly feed: string }) => {
  const { crumbs } = insightPage(props, "Preview")
  const [data, reload] = useLoad(`preview:${props.module}:${props.feed}`, () => loadPreview(props.bot, props.server, props.module, props.feed))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  return h(Page, { title: "Preview: what the feed would post now", crumbs: crumbs(name), actions: h("button", { type: "button", class: "secondary", onClick: reload }, "Fetch again") },
    h("p", { class: "muted" }, "The source's newest items, fetched now and judged by the feed's rules, each with its message as the chat platform would show it. Nothing is posted."),
    show(data, "the preview", reload, ({ server, feed, preview }) => h(PreviewItems, { items: preview.items, setting: settingOf(feed, server) })))
}

const PAGE_SIZE = 10

export const DeliveryLog = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName; readonly feed: string; readonly page: number }) => {
  const { base, crumbs } = insightPage(props, "Delivery log")
  const fp = feedParams(props.bot, props.server, props.feed)
  const [data, reload] = useLoad(`deliveries:${props.module}:${props.feed}:${props.page}`, () =>
    call((c) =>
      Effect.all({
        server: c.general.server({ params: fp }),
        log: group(c, props.module).deliveries({ params: fp, query: { page: String(props.page), page_size: String(PAGE_SIZE) } })
      })))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const here = `${base}/${props.feed}/deliveries`
  return h(Page, { title: "Delivery log", crumbs: crumbs(name), actions: h("button", { type: "button", class: "secondary", onClick: reload }, "Reload") },
    h("p", { class: "muted" }, "Every item sent, failed or skipped, newest first, kept 30 days."),
    show(data, "the delivery log", reload, ({ log }) =>
      h("div", null,
        log.deliveries.length === 0
          ? h("p", null, props.page > 1 ? "No delivery on this page." : "Nothing delivered yet.")
          : h("div", { class: "table-wrap" },
            h("table", null,
              h("caption", { class: "visually-hidden" }, "Deliveries of this feed"),
              h("thead", null, h("tr", null,
                h("th", { scope: "col" }, "When"),
                h("th", { scope: "col" }, "Item"),
                h("th", { scope: "col" }, "Result"),
                h("th", { scope: "col" }, "Why"))),
              h("tbody", null, ...log.deliveries.map((d) =>
                h("tr", { key: d.id },
                  h("td", null, when(d.at)),
                  h("th", { scope: "row" }, d.url === null ? (d.title ?? d.item_id) : h("a", { href: d.url, rel: "noreferrer", target: "_blank" }, d.title ?? d.url)),
                  h("td", null, h("span", { class: `badge ${d.state === "sent" ? "active" : d.state === "failed" ? "failing" : "disabled"}` }, d.state === "sent" ? "Sent" : d.state === "failed" ? "Failed" : "Skipped")),
                  h("td", null, d.reason ?? (d.message_id === null ? "" : `message ${d.message_id}`))))))),
        h(Pager, { page: log.page, pageMax: log.page_max, href: (p) => `${here}?page=${p}` }))))
}
