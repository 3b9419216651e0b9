/**
 * An embed as the platform shows it: the colour bar on the left (the embed's `color`, else the
 * theme's grey), the author, the title linked to its URL, the description as Markdown, the
 * thumbnail on the right, the image below, the footer with the time.
 */
import { h } from "preact"
import { useState } from "preact/hooks"
import type { PreviewItem } from "../../http/client.ts"
import { Markdown } from "./markdownView.ts"
import { barColour, isHttp } from "./messageText.ts"
import type { MentionContext } from "./markdownView.ts"

export type Embed = NonNullable<PreviewItem["message"]["embeds"]>[number]

/** An image from the source; when it cannot be loaded (gone, refused), a note saying so, its address on hover. */
const Picture = (props: { readonly url: string; readonly class: string; readonly alt: string }) => {
  const [failed, setFailed] = useState(false)
  if (!isHttp(props.url)) return null
  if (failed) return h("span", { class: `${props.class} picture-missing`, title: props.url }, `${props.alt} not loaded`)
  return h("img", { class: props.class, src: props.url, alt: props.alt, loading: "lazy", referrerpolicy: "no-referrer", onError: () => setFailed(true) })
}

const timeOf = (iso: string) => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}

export const EmbedCard = (props: { readonly embed: Embed; readonly context: MentionContext }) => {
  const e = props.embed
  const bar = barColour(e.color)
  const title = e.title === undefined
    ? null
    : isHttp(e.url)
    ? h("a", { class: "embed-title", href: e.url, target: "_blank", rel: "noreferrer noopener" }, e.title)
    : h("p", { class: "embed-title" }, e.title)
  const footer = [e.footer?.text, timeOf(e.timestamp)].filter((s) => s !== undefined && s !== "").join(" • ")
  return h("div", { class: "embed", style: bar === undefined ? undefined : `border-left-color:${bar}` },
    h("div", { class: "embed-main" },
      e.author === undefined ? null : h("p", { class: "embed-author" }, e.author.name),
      title,
      e.description === undefined ? null : h(Markdown, { class: "embed-description", text: e.description, context: props.context }),
      e.image === undefined ? null : h(Picture, { class: "embed-image", url: e.image.url, alt: "Image" }),
      footer === "" ? null : h("p", { class: "embed-footer" }, footer)),
    e.thumbnail === undefined ? null : h(Picture, { class: "embed-thumbnail", url: e.thumbnail.url, alt: "Thumbnail" }))
}
