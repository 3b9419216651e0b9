/**
 * A feed's options (gateway-api.md "Feeds"): only the options its module has, each with its limit
 * and its default, as the editor holds them (lists as text, one element a line) and as the API takes them.
 */
import { h } from "preact"
import type { VNode } from "preact"
import { useState } from "preact/hooks"
import { Result } from "effect"
import { EVENT_TYPES, MAX_MENTION_ROLES, MODULE_OPTIONS } from "../../http/client.ts"
import type { FeedModuleName, Role } from "../../http/client.ts"
import { group, paramsOf } from "./feedCommon.ts"
import type { Errors } from "../fields.ts"
import { ErrorText, Field, idOf, invalid, valueOf } from "../fields.ts"
import { call } from "../session.ts"

type OptionKind =
  | { readonly kind: "mode" }
  | { readonly kind: "nsfw" }
  | { readonly kind: "words"; readonly hint: string }
  | { readonly kind: "flag" }
  | { readonly kind: "events"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "roles" }
  | { readonly kind: "text"; readonly max: number; readonly multiline: boolean; readonly hint: string }

const OPTION: Record<string, { readonly label: string; readonly type: (m: FeedModuleName) => OptionKind }> = {
  filter_mode: { label: "Word filter mode", type: () => ({ kind: "mode" }) },
  nsfw: { label: "Adult content", type: () => ({ kind: "nsfw" }) },
  filter_words: { label: "Filter words, one per line", type: () => ({ kind: "words", hint: "Up to 50 words of at most 100 characters. Empty: no word filter." }) },
  filter_excl: { label: "Exclude items with these words (instead of keeping only them)", type: () => ({ kind: "flag" }) },
  filter_flair: { label: "Flairs, one per line", type: () => ({ kind: "words", hint: "Only posts with one of these flairs (up to 50). Empty: every flair." }) },
  filter_game: { label: "Games, one per line", type: () => ({ kind: "words", hint: "Only streams of these games, by name or id (up to 50). Empty: every game." }) },
  filter_event: {
    label: "Events to post",
    type: (m) => ({ kind: "events", values: m === "photo" || m === "streaming" || m === "video" ? EVENT_TYPES[m] : [] })
  },
  custom_header: { label: "Message header", type: () => ({ kind: "text", max: 1024, multiline: true, hint: "Up to 1024 characters, before the item's link. Empty: the module's default." }) },
  "webhook-name": { label: "Post as (name)", type: () => ({ kind: "text", max: 32, multiline: false, hint: "Up to 32 characters. Empty: the source's name." }) },
  "no-username-overwrite": { label: "Keep the webhook's own name", type: () => ({ kind: "flag" }) },
  "no-avatar-overwrite": { label: "Keep the webhook's own avatar", type: () => ({ kind: "flag" }) },
  // delivery.md §10.
  mention_roles: { label: "Roles to mention", type: () => ({ kind: "roles" }) },
  embed: { label: "Post as a rich embed (title, text, image)", type: () => ({ kind: "flag" }) },
  embed_color: { label: "Embed colour (#rrggbb)", type: () => ({ kind: "text", max: 7, multiline: false, hint: "Like #5865f2. Empty: no colour bar." }) },
  thread_id: { label: "Post into thread (id)", type: () => ({ kind: "text", max: 20, multiline: false, hint: "A thread of the webhook's channel. Empty: the channel itself." }) },
  forum_thread_name: { label: "Forum post title", type: () => ({ kind: "text", max: 1024, multiline: false, hint: "For a webhook in a forum channel; placeholders allowed, cut to 100 characters. Empty: %title%." }) },
  forum_tags: { label: "Forum tags, one per line", type: () => ({ kind: "words", hint: "Tags of the forum by name; unknown names are ignored." }) },
  crosspost: { label: "Publish to following servers (announcement channels)", type: () => ({ kind: "flag" }) },
  split: { label: "Split long messages (up to 3) instead of cutting them", type: () => ({ kind: "flag" }) }
}

const EVENT_LABEL: Record<string, string> = { post: "New posts", live: "Goes live", offline: "Goes offline", added: "New videos", updated: "Updated videos" }

/** The options as the editor holds them: lists as text, one element a line; null as "". */
export type DraftOptions = Readonly<Record<string, string | boolean | ReadonlyArray<string>>>

export const optionKeys = (m: FeedModuleName) => Object.keys(MODULE_OPTIONS[m])

export const draftOf = (m: FeedModuleName, options: Readonly<Record<string, unknown>>): DraftOptions =>
  Object.fromEntries(optionKeys(m).map((k) => {
    const v = k in options ? options[k] : (MODULE_OPTIONS[m] as Record<string, { default: unknown }>)[k]!.default
    const t = OPTION[k]!.type(m)
    if (t.kind === "flag") return [k, v === true]
    if (t.kind === "events") return [k, Array.isArray(v) ? v : t.values]
    if (t.kind === "roles") return [k, Array.isArray(v) ? v : []]
    if (t.kind === "words") return [k, Array.isArray(v) ? v.join("\n") : ""]
    return [k, typeof v === "string" ? v : ""]
  }))

/** The `webhook_options` body: every option of the module, "" and empty lists as null. */
export const optionsBody = (m: FeedModuleName, d: DraftOptions): Record<string, unknown> =>
  Object.fromEntries(optionKeys(m).map((k) => {
    const v = d[k]
    const t = OPTION[k]!.type(m)
    if (t.kind === "flag") return [k, v === true]
    if (t.kind === "mode") return [k, v === "" ? "OR" : v]
    if (t.kind === "events") {
      const list = v as ReadonlyArray<string>
      return [k, list.length === t.values.length ? null : list]
    }
    if (t.kind === "roles") {
      const list = v as ReadonlyArray<string>
      return [k, list.length === 0 ? null : list]
    }
    if (t.kind === "words") {
      const lines = String(v).split("\n").map((w) => w.trim()).filter((w) => w !== "")
      return [k, lines.length === 0 ? null : lines]
    }
    return [k, v === "" ? null : v]
  }))

export const OptionsFields = (props: {
  readonly module: FeedModuleName
  readonly draft: DraftOptions
  readonly set: (key: string, value: string | boolean | ReadonlyArray<string>) => void
  readonly errors: Errors
  readonly bot: string
  readonly server: string
  /** The server's roles that a feed may mention (not @everyone). */
  readonly roles: ReadonlyArray<Role>
}) => {
  const m = props.module
  const field = (k: string): VNode<any> => {
    const path = `webhook_options.${k}`
    const id = idOf(path)
    const t = OPTION[k]!.type(m)
    const label = OPTION[k]!.label
    const def = (MODULE_OPTIONS[m] as Record<string, { default: unknown }>)[k]!.default
    const v = props.draft[k]
    switch (t.kind) {
      case "flag":
        return h("div", { key: k },
          h("label", { class: "check" },
            h("input", { id, type: "checkbox", checked: v === true, ...invalid(path, props.errors), onChange: (e) => props.set(k, e.currentTarget.checked) }),
            " ", label),
          h(ErrorText, { path, errors: props.errors }))
      case "mode":
        return h(Field, { key: k, path, label, hint: "OR: any of the words; AND: all of them. Default OR.", errors: props.errors },
          h("select", { id, value: String(v), ...invalid(path, props.errors), onChange: (e: Event) => props.set(k, valueOf(e)) },
            h("option", { value: "OR" }, "Any word (OR)"),
            h("option", { value: "AND" }, "Every word (AND)")))
      case "nsfw":
        return h(Field, { key: k, path, label, hint: `Default: ${def === null ? "post as it comes" : String(def)}.`, errors: props.errors },
          h("select", { id, value: String(v), ...invalid(path, props.errors), onChange: (e: Event) => props.set(k, valueOf(e)) },
            h("option", { value: "" }, "Post as it comes"),
            h("option", { value: "censor" }, "Post with the media hidden"),
            h("option", { value: "skip" }, "Do not post"),
            h("option", { value: "only" }, "Post only adult content")))
      case "words":
        return h(Field, { key: k, path, label, hint: t.hint, errors: props.errors },
          h("textarea", { id, rows: 3, value: String(v), ...invalid(path, props.errors), onInput: (e: Event) => props.set(k, valueOf(e)) }),
          k === "filter_game" ? h(GameLookupField, { bot: props.bot, server: props.server, add: (name) => props.set(k, `${String(v).trim()}\n${name}`.trim()) }) : null)
      case "events": {
        const list = v as ReadonlyArray<string>
        return h("fieldset", { key: k, class: "checks", id, ...invalid(path, props.errors) },
          h("legend", null, label),
          ...t.values.map((e) =>
            h("label", { key: e, class: "check" },
              h("input", {
                type: "checkbox",
                checked: list.includes(e),
                onChange: (ev) => props.set(k, ev.currentTarget.checked ? t.values.filter((x) => x === e || list.includes(x)) : list.filter((x) => x !== e))
              }),
              " ", EVENT_LABEL[e] ?? e)),
          h(ErrorText, { path, errors: props.errors }))
      }
      case "roles":
        return h(RolePicker, { key: k, id, path, label, value: v as ReadonlyArray<string>, roles: props.roles, errors: props.errors, set: (ids) => props.set(k, ids) })
      case "text":
        return h(Field, { key: k, path, label, hint: t.hint, errors: props.errors },
          t.multiline
            ? h("textarea", { id, rows: 2, maxLength: t.max, value: String(v), ...invalid(path, props.errors), onInput: (e: Event) => props.set(k, valueOf(e)) })
            : h("input", { id, type: "text", maxLength: t.max, value: String(v), ...invalid(path, props.errors), onInput: (e: Event) => props.set(k, valueOf(e)) }))
    }
  }
  const keys = optionKeys(m)
  const flags = keys.filter((k) => OPTION[k]!.type(m).kind === "flag")
  return [
    ...keys.filter((k) => !flags.includes(k)).map(field),
    h("div", { key: "flags", class: "flags" }, ...flags.map(field))
  ]
}

/** Roles by name (the feed stores their ids); a stored id the server no longer has is listed to be unticked. */
const RolePicker = (props: {
  readonly id: string
  readonly path: string
  readonly label: string
  readonly value: ReadonlyArray<string>
  readonly roles: ReadonlyArray<Role>
  readonly errors: Errors
  readonly set: (ids: ReadonlyArray<string>) => void
}) => {
  const gone = props.value.filter((id) => !props.roles.some((r) => r.id === id)).map((id) => ({ id, name: `unknown role (${id})`, color_hex: "#000000" }))
  const choices = [...props.roles.map((r) => ({ ...r, name: `@${r.name.replace(/^@/, "")}` })), ...gone]
  const hintId = `${props.id}-hint`
  return h("fieldset", { class: "checks", id: props.id, ...invalid(props.path, props.errors), "aria-describedby": props.errors.has(props.path) ? `${props.id}-error ${hintId}` : hintId },
    h("legend", null, props.label),
    h("span", { class: "hint roles-hint", id: hintId }, `Up to ${MAX_MENTION_ROLES}; their members are pinged by each post, and no one else. None ticked: the posts ping no one.`),
    choices.length === 0 ? h("p", { class: "muted" }, "This server has no role to mention.") : null,
    ...choices.map((r) =>
      h("label", { key: r.id, class: "check" },
        h("input", {
          type: "checkbox",
          value: r.id,
          checked: props.value.includes(r.id),
          onChange: (e) => props.set(e.currentTarget.checked ? [...props.value, r.id] : props.value.filter((x) => x !== r.id))
        }),
        " ", /^#[0-9a-f]{6}$/i.test(r.color_hex) && r.color_hex !== "#000000" ? h("span", { class: "swatch", "aria-hidden": "true", style: `background:${r.color_hex}` }) : null,
        r.name)),
    h(ErrorText, { path: props.path, errors: props.errors }))
}

const GameLookupField = (props: { readonly bot: string; readonly server: string; readonly add: (name: string) => void }) => {
  const [name, setName] = useState("")
  const [said, setSaid] = useState("")
  const find = async () => {
    if (name.trim() === "") return
    const answer = await call((c) => group(c, "streaming").getGameId!({ params: { ...paramsOf(props.bot, props.server), gameName: name.trim() } }))
    if (Result.isFailure(answer)) setSaid(answer.failure.message)
    else {
      props.add(answer.success.gameName)
      setSaid(`Added ${answer.success.gameName} (game ${answer.success.gameId}).`)
      setName("")
    }
  }
  return h("div", { class: "lookup" },
    h("label", { for: "game-lookup" }, "Find a game"),
    h("input", { id: "game-lookup", type: "text", value: name, onInput: (e: Event) => setName(valueOf(e)) }),
    h("button", { type: "button", class: "secondary", onClick: () => void find() }, "Look up the game"),
    h("span", { role: "status", class: "hint" }, said))
}
