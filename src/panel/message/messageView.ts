/**
 * A feed's message as the chat platform would show it (the preview and the test message): the
 * webhook's name and avatar, the text as Markdown with role mentions by name, the embed card, a
 * split message's parts one after the other, a forum post's title and tags; who it pings; and the
 * body itself, key for key, behind "As sent".
 */
import { h } from "preact"
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import type { Role } from "../../http/client.ts"
import { Avatar } from "../ui.ts"
import { EmbedCard } from "./embedView.ts"
import { Markdown } from "./markdownView.ts"
import type { MentionContext } from "./markdownView.ts"
import type { Message } from "./messageText.ts"
import { isHttp, pingsOf, tagNames } from "./messageText.ts"

/** What the message alone does not say: the server's roles, the webhook's own name, the feed's forum tag names. */
export interface MessageSetting {
  readonly roles: ReadonlyArray<Role>
  /** Shown when the message carries no `username` (the webhook's own name). */
  readonly webhookName: string
  /** The feed's `forum_tags`: the names behind a forum post's `applied_tags` ids. */
  readonly forumTags: ReadonlyArray<string> | null
}

const Part = (props: {
  readonly content: string
  readonly context: MentionContext
  readonly name: string
  readonly avatar: string | null
  readonly index: number
  readonly count: number
  readonly children?: ComponentChildren
}) => {
  const first = props.index === 0
  return h("article", { class: `chat-message${first ? "" : " continued"}`, "aria-label": props.count === 1 ? "Message" : `Message ${props.index + 1} of ${props.count}` },
    first
      ? h(WebhookAvatar, { url: props.avatar, name: props.name })
      : h("span", { class: "msg-part", "aria-hidden": "true" }, `${props.index + 1}/${props.count}`),
    h("div", { class: "msg-main" },
      first ? h("p", { class: "msg-head" }, h("span", { class: "msg-author" }, props.name), " ", h("span", { class: "app-tag" }, "APP")) : null,
      props.content === "" ? null : h(Markdown, { class: "msg-content", text: props.content, context: props.context }),
      props.children))
}

/** The avatar from its URL; the initials when it has none or it does not load. */
const WebhookAvatar = (props: { readonly url: string | null; readonly name: string }) => {
  const [failed, setFailed] = useState(false)
  return isHttp(props.url ?? undefined) && !failed
    ? h("img", { class: "avatar", src: props.url!, alt: "", width: 40, height: 40, referrerpolicy: "no-referrer", onError: () => setFailed(true) })
    : h(Avatar, { kind: "icons", id: props.name, icon: null, name: props.name.replace(/[^\p{L}\p{N}]+/gu, " ") })
}

export const MessageView = (props: { readonly message: Message; readonly setting: MessageSetting; readonly label: string }) => {
  const m = props.message
  const context: MentionContext = { roles: props.setting.roles, pinged: new Set(m.allowed_mentions.roles ?? []) }
  const name = m.username ?? props.setting.webhookName
  const contents = [m.content, ...(m.continued ?? [])]
  const tags = m.applied_tags === undefined ? [] : tagNames(m.applied_tags, props.setting.forumTags)
  return h("div", { class: "chat", role: "group", "aria-label": props.label },
    m.thread_name === undefined
      ? null
      : h("div", { class: "forum-post" },
        h("p", { class: "forum-label" }, "New forum post"),
        h("p", { class: "forum-title" }, m.thread_name),
        tags.length === 0 ? null : h("ul", { class: "forum-tags", "aria-label": "Tags" }, ...tags.map((t) => h("li", { key: t }, t)))),
    ...contents.map((content, i) =>
      h(Part, { key: String(i), content, context, name, avatar: m.avatar_url, index: i, count: contents.length },
        i === 0 ? (m.embeds ?? []).map((e, j) => h(EmbedCard, { key: String(j), embed: e, context })) : null)),
    h("p", { class: "msg-pings" }, pingsOf(m, props.setting.roles)),
    h("details", { class: "as-sent" },
      h("summary", null, "As sent (JSON)"),
      h("pre", { class: "message" }, JSON.stringify(m, null, 2))))
}
