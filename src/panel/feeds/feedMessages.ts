/**
 * A feed's messages as people will see them (delivery.md §8 and §10): each preview item with its
 * verdict, its reasons and its message as the platform would show it; the test message just sent.
 */
import { h } from "preact"
import { Effect } from "effect"
import type { Feed, FeedModuleName, PreviewItem, Server } from "../../http/client.ts"
import { feedParams, group } from "./feedCommon.ts"
import type { MessageSetting } from "../message/messageView.ts"
import { MessageView } from "../message/messageView.ts"
import type { Failure } from "../problems.ts"
import { call } from "../session.ts"
import { ErrorBox, when } from "../ui.ts"

/** What a feed's messages are shown with: the server's roles, the webhook's name, the feed's forum tags. */
export const settingOf = (feed: Feed | undefined, server: Server): MessageSetting => {
  const options = (feed?.webhook_options ?? {}) as { readonly forum_tags?: ReadonlyArray<string> | null }
  return { roles: server.roles, webhookName: feed?.webhook_info.name ?? "Webhook", forumTags: options.forum_tags ?? null }
}

/** The server, the feed (for its webhook's name and forum tags; none by id, so from the list) and its preview. */
export const loadPreview = (bot: string, server: string, module: FeedModuleName, feedId: string) => {
  const fp = feedParams(bot, server, feedId)
  return call((c) =>
    Effect.all({
      server: c.general.server({ params: fp }),
      feed: Effect.map(group(c, module).list({ params: fp }), ({ feeds }) => feeds.find((f) => f.id === feedId)),
      preview: group(c, module).preview({ params: fp })
    }, { concurrency: 3 }))
}

const title = (item: PreviewItem) => item.title ?? item.url

export const PreviewItems = (props: { readonly items: ReadonlyArray<PreviewItem>; readonly setting: MessageSetting }) =>
  props.items.length === 0
    ? h("p", null, "The source has no item yet.")
    : h("ol", { class: "preview" }, ...props.items.map((item) =>
      h("li", { key: item.id, class: `preview-item ${item.verdict}` },
        h("h2", null, title(item)),
        h("p", null,
          h("span", { class: `badge ${item.verdict === "post" ? "active" : "disabled"}` }, item.verdict === "post" ? "Would post" : "Would skip"),
          " ", h("span", { class: "muted" }, `published ${when(item.published_at)}`)),
        h("p", { class: "hint" }, item.reasons.length === 0 ? "Why: no filter or rule stands in its way." : "Why:"),
        item.reasons.length === 0 ? null : h("ul", null, ...item.reasons.map((r, i) => h("li", { key: String(i) }, r))),
        h("p", { class: "hint" }, item.verdict === "post" ? "The message it would post:" : "The message, were it posted:"),
        h(MessageView, { message: item.message, setting: props.setting, label: `The message of “${title(item)}”` }))))

/** A test message sent: its id, and the source's newest item as the preview renders it (or why not). */
export interface TestSent {
  readonly messageId: string | null
  readonly shown: { readonly item: PreviewItem | undefined } | { readonly failure: Failure }
}

/**
 * After a test message: what was posted. The test route answers with the message's id only; the
 * message is the source's newest item rendered as usual, which is the preview's first item.
 */
export const TestMessage = (props: { readonly sent: TestSent; readonly setting: MessageSetting }) => {
  const { sent } = props
  return h("section", { class: "test-message", "aria-labelledby": "sec-test-message" },
    h("h3", { id: "sec-test-message" }, "The test message"),
    h("p", { class: "hint" }, `Posted${sent.messageId === null ? "" : ` as message ${sent.messageId}`}: the source's newest item, shown as the preview renders it now.`),
    "failure" in sent.shown
      ? h(ErrorBox, { failure: sent.shown.failure })
      : sent.shown.item === undefined
      ? h("p", null, "The source has no item now.")
      : h(MessageView, { message: sent.shown.item.message, setting: props.setting, label: `The test message: “${title(sent.shown.item)}”` }))
}
