/**
 * Markdown nodes (markdown.ts) as elements: text goes in as text (Preact escapes it), links only to
 * http(s) addresses and opened apart, role mentions as `@Name` chips from the server's roles (a role
 * it does not have: `@unknown-role`, as the platform shows it), other mentions as the plain text they
 * are, marked when they do not ping.
 */
import { h } from "preact"
import type { ComponentChild } from "preact"
import type { Role } from "../../http/client.ts"
import type { MdNode } from "./markdown.ts"
import { parseMarkdown } from "./markdown.ts"
import { isHttp, roleName } from "./messageText.ts"

/** What a message's text is shown with: the server's roles, and the ones this message may ping. */
export interface MentionContext {
  readonly roles: ReadonlyArray<Role>
  readonly pinged: ReadonlySet<string>
}

const RoleChip = (props: { readonly id: string; readonly context: MentionContext }) => {
  const role = props.context.roles.find((r) => r.id === props.id)
  const name = roleName(props.context.roles, props.id)
  const pings = props.context.pinged.has(props.id)
  // The role's colour as a dot (the chip's text keeps the theme's contrast); checked, as it goes into a style.
  const colour = role !== undefined && /^#[0-9a-f]{6}$/i.test(role.color_hex) && role.color_hex !== "#000000" ? role.color_hex : undefined
  return h("span", {
    class: `role-mention${pings ? " pings" : ""}${role === undefined ? " unknown" : ""}`,
    "data-role-id": props.id,
    style: colour === undefined ? undefined : `--role:${colour}`,
    title: pings ? `Pings the members of @${name}` : `Shown as @${name}; does not ping`
  }, `@${name}`)
}

const NoPing = (props: { readonly text: string }) =>
  h("span", { class: "no-ping", title: "Shown as written; does not ping (the message's allowed_mentions)" }, props.text)

const nodes = (list: ReadonlyArray<MdNode>, context: MentionContext): Array<ComponentChild> =>
  list.map((n, i) => {
    switch (n.kind) {
      case "text":
        return n.text
      case "br":
        return h("br", { key: i })
      case "strong":
      case "em":
      case "u":
      case "s":
        return h(n.kind, { key: i }, ...nodes(n.children, context))
      case "quote":
        return h("blockquote", { key: i, class: "md-quote" }, ...nodes(n.children, context))
      case "heading":
        return h("span", { key: i, class: `md-heading md-h${n.level}` }, ...nodes(n.children, context))
      case "code":
        return h("code", { key: i, class: "md-code" }, n.text)
      case "codeblock":
        return h("pre", { key: i, class: "md-codeblock" }, h("code", null, n.text))
      case "link":
        return isHttp(n.href)
          ? h("a", { key: i, href: n.href, target: "_blank", rel: "noreferrer noopener" }, ...nodes(n.children, context))
          : n.href
      case "role":
        return h(RoleChip, { key: i, id: n.id, context })
      case "mention":
        return h(NoPing, { key: i, text: n.text })
    }
  })

/** The Markdown of a message or an embed's description, shown as the platform would. */
export const Markdown = (props: { readonly text: string; readonly context: MentionContext; readonly class: string }) =>
  h("div", { class: props.class }, ...nodes(parseMarkdown(props.text), props.context))
