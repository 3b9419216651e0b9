/**
 * The six feed modules (gateway-api.md "Feeds", delivery.md §5 and §8): the feeds of a module with
 * their status, the editor (create with a lookup and a webhook by channel or URL; the module's own
 * options), and per feed the preview with reasons, a test message, a poll now and the delivery log.
 */
import { h } from "preact"
import type { VNode } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { BotId, EVENT_TYPES, FeedId, isLookupModule, MODULE_OPTIONS, ServerId } from "../http/client.ts"
import type { Client, Feed, FeedModuleName, FeedStatus, GameLookup, Server, UserLookup } from "../http/client.ts"
import type { DeliveryLogPage, FeedPreview, TestMessageResult } from "../domain/FeedInsight.ts"
import { ErrorText, Field, fieldOf, idOf, invalid, valueOf } from "./forms.ts"
import type { Failure, FieldProblem } from "./problems.ts"
import { withoutPath } from "./problems.ts"
import { navigate, setGuard } from "./router.ts"
import { call } from "./session.ts"
import { ErrorBox, Page, show, useLoad } from "./ui.ts"

export const FEED_MODULES: ReadonlyArray<FeedModuleName> = ["photo", "forum", "rss", "streaming", "microblog", "video"]
export const isFeedModule = (m: string): m is FeedModuleName => FEED_MODULES.some((f) => f === m)

export const MODULE_LABEL: Record<FeedModuleName, string> = {
  photo: "Photo",
  forum: "Forum",
  rss: "RSS",
  streaming: "Streaming",
  microblog: "Microblog",
  video: "Video"
}

/** What to type as the source, per module (the lookup names the user; the feed stores the id). */
const IDENTIFIER: Record<FeedModuleName, { readonly label: string; readonly hint: string; readonly lookup?: string }> = {
  photo: { label: "Account id", hint: "The photo account's id. Find it from the user name below.", lookup: "Photo user name" },
  forum: { label: "Forum name", hint: "The forum's name, as in its address (for example SandboxGaming)." },
  rss: { label: "Feed URL", hint: "The address of an RSS or Atom feed." },
  streaming: { label: "Streamer id", hint: "The streamer's id. Find it from the login below.", lookup: "Streamer login" },
  microblog: { label: "Account id", hint: "The account's id. Find it from the user name below.", lookup: "Microblog user name" },
  video: { label: "Channel id", hint: "The channel's id. Find it from its @handle or id below.", lookup: "Channel @handle or id" }
}

type P = { readonly appClientId: BotId; readonly serverId: ServerId }
type FP = P & { readonly feedId: FeedId }
type Call<I, A> = (request: I) => Effect.Effect<A, unknown>

/** One module's routes through the typed client, seen without the module in their types. */
interface FeedsGroup {
  readonly list: Call<{ readonly params: P }, { readonly feeds: ReadonlyArray<Feed> }>
  readonly create: Call<{ readonly params: P; readonly payload: unknown }, Feed>
  readonly update: Call<{ readonly params: FP; readonly payload: unknown }, Feed>
  readonly delete: Call<{ readonly params: FP }, unknown>
  readonly status: Call<{ readonly params: FP }, FeedStatus>
  readonly preview: Call<{ readonly params: FP }, FeedPreview>
  readonly test: Call<{ readonly params: FP }, TestMessageResult>
  readonly refresh: Call<{ readonly params: FP }, unknown>
  readonly deliveries: Call<{ readonly params: FP; readonly query: { readonly page?: string; readonly page_size?: string } }, DeliveryLogPage>
  readonly getUserId?: Call<{ readonly params: P & { readonly userName: string } }, UserLookup>
  readonly getGameId?: Call<{ readonly params: P & { readonly gameName: string } }, GameLookup>
}
// The cast: every module's group has these routes with these shapes (http/FeedsApi.ts builds them
// from one function); only their module-specific option types differ, which the editor handles.
const group = (c: Client, m: FeedModuleName) => c[m] as unknown as FeedsGroup

const paramsOf = (bot: string, server: string): P => ({ appClientId: BotId.make(bot), serverId: ServerId.make(server) })
const feedParams = (bot: string, server: string, feed: string): FP => ({ ...paramsOf(bot, server), feedId: FeedId.make(feed) })
const serverBase = (bot: string, server: string) => `/app/bots/${bot}/servers/${server}`
const crumbsOf = (bot: string, server: string, name: string) => [
  { label: "Bots", href: "/app" },
  { label: "Servers", href: `/app/bots/${bot}` },
  { label: name, href: serverBase(bot, server) }
]

/** A UTC ISO instant in the user's locale and time zone. */
export const when = (iso: string | null, none = "never") => (iso === null ? none : new Date(iso).toLocaleString())

const feedName = (f: Feed) => {
  const d = (f as { readonly display_info?: { readonly display_name: string; readonly user_name: string } }).display_info
  return d === undefined ? f.feed_identifier : `${d.display_name} (${d.user_name})`
}

const channelName = (server: Server, id: string) => {
  const c = server.channels.find((ch) => ch.id === id)
  return c === undefined ? `channel ${id}` : `#${c.name}`
}

const STATE_LABEL = { active: "Active", failing: "Failing", disabled: "Disabled" } as const

const StatusBadge = (props: { readonly status: FeedStatus | undefined }) =>
  props.status === undefined
    ? h("span", { class: "muted" }, "Status unknown")
    : h("span", { class: "status-cell" },
      h("span", { class: `badge ${props.status.state}` }, STATE_LABEL[props.status.state]),
      props.status.reason === null ? null : h("span", { class: "why" }, props.status.reason))

// ---------------------------------------------------------------------------------------------
// The list
// ---------------------------------------------------------------------------------------------

/** The route's message for carrying a line to the next screen ("Created the feed …"). */
let carried = ""
const takeCarried = () => {
  const said = carried
  carried = ""
  return said
}

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
  h("p", { role: "status", class: "notice-line" }, status),
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

// ---------------------------------------------------------------------------------------------
// The editor: create (source and webhook) and the options
// ---------------------------------------------------------------------------------------------

type OptionKind =
  | { readonly kind: "mode" }
  | { readonly kind: "nsfw" }
  | { readonly kind: "words"; readonly hint: string }
  | { readonly kind: "flag" }
  | { readonly kind: "events"; readonly values: ReadonlyArray<string> }
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
  "no-avatar-overwrite": { label: "Keep the webhook's own avatar", type: () => ({ kind: "flag" }) }
}

const EVENT_LABEL: Record<string, string> = { post: "New posts", live: "Goes live", offline: "Goes offline", added: "New videos", updated: "Updated videos" }

/** The options as the editor holds them: lists as text, one element a line; null as "". */
type DraftOptions = Readonly<Record<string, string | boolean | ReadonlyArray<string>>>

const optionKeys = (m: FeedModuleName) => Object.keys(MODULE_OPTIONS[m])

const draftOf = (m: FeedModuleName, options: Readonly<Record<string, unknown>>): DraftOptions =>
  Object.fromEntries(optionKeys(m).map((k) => {
    const v = k in options ? options[k] : (MODULE_OPTIONS[m] as Record<string, { default: unknown }>)[k]!.default
    const t = OPTION[k]!.type(m)
    if (t.kind === "flag") return [k, v === true]
    if (t.kind === "events") return [k, Array.isArray(v) ? v : t.values]
    if (t.kind === "words") return [k, Array.isArray(v) ? v.join("\n") : ""]
    return [k, typeof v === "string" ? v : ""]
  }))

/** The `webhook_options` body: every option of the module, "" and empty lists as null. */
const optionsBody = (m: FeedModuleName, d: DraftOptions): Record<string, unknown> =>
  Object.fromEntries(optionKeys(m).map((k) => {
    const v = d[k]
    const t = OPTION[k]!.type(m)
    if (t.kind === "flag") return [k, v === true]
    if (t.kind === "mode") return [k, v === "" ? "OR" : v]
    if (t.kind === "events") {
      const list = v as ReadonlyArray<string>
      return [k, list.length === t.values.length ? null : list]
    }
    if (t.kind === "words") {
      const lines = String(v).split("\n").map((w) => w.trim()).filter((w) => w !== "")
      return [k, lines.length === 0 ? null : lines]
    }
    return [k, v === "" ? null : v]
  }))

type Errors = ReadonlyMap<string, ReadonlyArray<string>>

const errorsOf = (problems: ReadonlyArray<FieldProblem>, known: ReadonlySet<string>): Map<string, Array<string>> => {
  const errors = new Map<string, Array<string>>()
  for (const p of problems) {
    const field = p.path === undefined ? undefined : fieldOf(p.path, known)
    if (field !== undefined) errors.set(field, [...(errors.get(field) ?? []), withoutPath(p)])
  }
  return errors
}

const OptionsFields = (props: {
  readonly module: FeedModuleName
  readonly draft: DraftOptions
  readonly set: (key: string, value: string | boolean | ReadonlyArray<string>) => void
  readonly errors: Errors
  readonly bot: string
  readonly server: string
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

interface EditorData {
  readonly server: Server
  readonly feed: Feed | undefined
  readonly status: FeedStatus | undefined
}

export const FeedEditor = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName; readonly feed: string | undefined }) => {
  const params = paramsOf(props.bot, props.server)
  const m = props.module
  const base = `${serverBase(props.bot, props.server)}/feeds/${m}`
  const [data, reload] = useLoad(`feed:${base}/${props.feed ?? "new"}`, () =>
    call((c) =>
      Effect.gen(function*() {
        const server = yield* c.general.server({ params })
        if (props.feed === undefined) return { server, feed: undefined, status: undefined }
        const g = group(c, m)
        const fp = { ...params, feedId: FeedId.make(props.feed) }
        const { feeds } = yield* g.list({ params })
        const feed = feeds.find((f) => f.id === props.feed)
        const status = feed === undefined ? undefined : yield* g.status({ params: fp })
        return { server, feed, status }
      })))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  const title = props.feed === undefined
    ? `New ${MODULE_LABEL[m]} feed`
    : data.kind === "ok" && data.value.feed !== undefined
    ? `${MODULE_LABEL[m]} feed “${feedName(data.value.feed)}”`
    : `${MODULE_LABEL[m]} feed`
  return h(Page, {
    title,
    crumbs: [...crumbsOf(props.bot, props.server, name), { label: `${MODULE_LABEL[m]} feeds`, href: base }, { label: props.feed === undefined ? "New feed" : "Edit" }]
  }, show(data, "the feed", reload, (loaded: EditorData) =>
    props.feed !== undefined && loaded.feed === undefined
      ? h("p", null, "This feed does not exist any more. ", h("a", { href: base }, "Back to the feeds."))
      : h(Editor, { key: props.feed ?? "new", data: loaded, bot: props.bot, server: props.server, module: m, feedId: props.feed, base, reload })))
}

const Editor = (props: {
  readonly data: EditorData
  readonly bot: string
  readonly server: string
  readonly module: FeedModuleName
  readonly feedId: string | undefined
  readonly base: string
  readonly reload: () => void
}) => {
  const m = props.module
  const { server, feed, status: feedStatus } = props.data
  const creating = props.feedId === undefined
  const postable = server.channels.filter((c) => c.type === "GuildText" || c.type === "GuildNews")
  const [identifier, setIdentifier] = useState("")
  const [target, setTarget] = useState<"channel" | "url">("channel")
  const [channel, setChannel] = useState(postable[0]?.id ?? "")
  const [url, setUrl] = useState("")
  const [options, setOptions] = useState<DraftOptions>(() => draftOf(m, (feed?.webhook_options ?? {}) as Record<string, unknown>))
  const [saved, setSaved] = useState(options)
  const [problems, setProblems] = useState<ReadonlyArray<FieldProblem>>([])
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const [status, setStatus] = useState(takeCarried)
  const dirty = JSON.stringify(options) !== JSON.stringify(saved) || (creating && (identifier !== "" || url !== ""))
  const summary = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (failure !== undefined) summary.current?.focus()
  }, [failure])
  useEffect(() => {
    setGuard(dirty ? () => "You have unsaved changes to this feed. Leave without saving?" : undefined)
    return () => setGuard(undefined)
  }, [dirty])

  const known = new Set<string>(["feed_identifier", "webhook_channel", "webhook_url", "webhook_options", ...optionKeys(m).map((k) => `webhook_options.${k}`)])
  const errors = errorsOf(problems, known)
  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setStatus("")
    setFailure(undefined)
    const webhook_options = optionsBody(m, options)
    const answer = await call((c) =>
      creating
        ? group(c, m).create({
          params: paramsOf(props.bot, props.server),
          payload: { feed_identifier: identifier.trim(), ...(target === "channel" ? { webhook_channel: channel } : { webhook_url: url.trim() }), webhook_options }
        })
        : group(c, m).update({ params: feedParams(props.bot, props.server, props.feedId!), payload: { webhook_options } }))
    setBusy(false)
    if (Result.isFailure(answer)) {
      setProblems(answer.failure.problems)
      setFailure(answer.failure)
      return
    }
    setProblems([])
    const next = draftOf(m, answer.success.webhook_options as Record<string, unknown>)
    setOptions(next)
    setSaved(next)
    if (creating) {
      setIdentifier("")
      setUrl("")
      carried = `Created the feed “${feedName(answer.success)}”.`
      navigate(`${props.base}/${answer.success.id}`, { replace: true, force: true })
    } else setStatus(`Saved the options of “${feedName(answer.success)}”.`)
  }

  return h("div", null,
    creating || feedStatus === undefined || feed === undefined ? null : h(FeedSummary, { feed, status: feedStatus, server, base: `${props.base}/${props.feedId}`, bot: props.bot, serverId: props.server, module: m, reload: props.reload }),
    h("form", { class: "editor", onSubmit: save, noValidate: true },
      failure === undefined ? null : h("div", { class: "error", role: "alert", tabIndex: -1, ref: summary },
        h("p", null, problems.length > 0 ? "The feed was not saved. Fix the fields marked below:" : failure.message),
        problems.length > 0
          ? h("ul", null, ...problems.map((p, i) => {
            const field = p.path === undefined ? undefined : fieldOf(p.path, known)
            return h("li", { key: String(i) }, field === undefined ? p.message : h("a", { href: `#${idOf(field)}` }, p.message))
          }))
          : null),
      creating
        ? h("section", { "aria-labelledby": "sec-source" },
          h("h2", { id: "sec-source" }, "Source"),
          isLookupModule(m) ? h(UserLookupField, { bot: props.bot, server: props.server, module: m, found: setIdentifier }) : null,
          h(Field, { path: "feed_identifier", label: IDENTIFIER[m].label, hint: IDENTIFIER[m].hint, errors },
            h("input", { id: idOf("feed_identifier"), type: m === "rss" ? "url" : "text", maxLength: 2048, value: identifier, ...invalid("feed_identifier", errors), onInput: (e: Event) => setIdentifier(valueOf(e)) })))
        : null,
      creating
        ? h("section", { "aria-labelledby": "sec-webhook" },
          h("h2", { id: "sec-webhook" }, "Where to post"),
          h("fieldset", { class: "checks" },
            h("legend", null, "Post through"),
            h("label", { class: "check" }, h("input", { type: "radio", name: "target", checked: target === "channel", onChange: () => setTarget("channel") }), " A channel (the bot finds or creates its webhook)"),
            h("label", { class: "check" }, h("input", { type: "radio", name: "target", checked: target === "url", onChange: () => setTarget("url") }), " An existing webhook's URL")),
          target === "channel"
            ? h(Field, { path: "webhook_channel", label: "Channel", errors },
              h("select", { id: idOf("webhook_channel"), value: channel, ...invalid("webhook_channel", errors), onChange: (e: Event) => setChannel(valueOf(e)) },
                ...postable.map((c) => h("option", { key: c.id, value: c.id }, `#${c.name}`))))
            : h(Field, { path: "webhook_url", label: "Webhook URL", hint: "It holds the webhook's secret: it is sent to the gateway only, never shown again.", errors },
              h("input", { id: idOf("webhook_url"), type: "url", autocomplete: "off", spellcheck: false, maxLength: 2048, value: url, ...invalid("webhook_url", errors), onInput: (e: Event) => setUrl(valueOf(e)) })))
        : null,
      h("section", { "aria-labelledby": "sec-options" },
        h("h2", { id: "sec-options" }, "Options"),
        h("p", { class: "hint" }, `Only the options of the ${MODULE_LABEL[m]} module; each starts at its default.`),
        h(ErrorText, { path: "webhook_options", errors }),
        h(OptionsFields, { module: m, draft: options, set: (k, v) => setOptions((d) => ({ ...d, [k]: v })), errors, bot: props.bot, server: props.server })),
      h("p", { role: "status", class: "notice-line" }, status),
      h("div", { class: "form-actions" },
        h("button", { type: "submit", disabled: busy }, busy ? "Saving…" : creating ? "Create the feed" : "Save the options"),
        h("a", { class: "button secondary", href: props.base }, "Back to the feeds"),
        dirty ? h("span", { class: "muted" }, "Unsaved changes") : null)))
}

const UserLookupField = (props: { readonly bot: string; readonly server: string; readonly module: FeedModuleName; readonly found: (id: string) => void }) => {
  const [name, setName] = useState("")
  const [said, setSaid] = useState<{ readonly text: string; readonly error: boolean }>({ text: "", error: false })
  const find = async () => {
    if (name.trim() === "") return
    const answer = await call((c) => group(c, props.module).getUserId!({ params: { ...paramsOf(props.bot, props.server), userName: name.trim() } }))
    if (Result.isFailure(answer)) setSaid({ text: answer.failure.message, error: true })
    else {
      props.found(answer.success.userId)
      setSaid({ text: `Found ${answer.success.displayName} (${answer.success.userName}), id ${answer.success.userId}.`, error: false })
    }
  }
  return h("div", { class: "lookup" },
    h("label", { for: "user-lookup" }, IDENTIFIER[props.module].lookup ?? "Name"),
    h("input", {
      id: "user-lookup",
      type: "text",
      value: name,
      onInput: (e: Event) => setName(valueOf(e)),
      onKeyDown: (e: KeyboardEvent) => {
        if (e.key === "Enter") {
          e.preventDefault()
          void find()
        }
      }
    }),
    h("button", { type: "button", class: "secondary", onClick: () => void find() }, "Look up"),
    h("span", { role: "status", class: said.error ? "field-error" : "hint" }, said.text))
}

/** The feed's status and its actions: test message, poll now, preview, delivery log, delete. */
const FeedSummary = (props: {
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
  const fp = feedParams(props.bot, props.serverId, props.feed.id)
  const act = async (what: "test" | "refresh") => {
    setBusy(true)
    setSaid("")
    setFailure(undefined)
    const answer = await call((c) => what === "test" ? group(c, props.module).test({ params: fp }) : group(c, props.module).refresh({ params: fp }))
    setBusy(false)
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else setSaid(what === "test" ? "Sent a test message with the source's newest item." : "The source is being polled now; new items follow in the delivery log.")
  }
  const remove = async () => {
    if (!confirm(`Delete the ${MODULE_LABEL[props.module]} feed “${feedName(props.feed)}”? It stops posting at once.`)) return
    const answer = await call((c) => group(c, props.module).delete({ params: fp }))
    if (Result.isFailure(answer)) setFailure(answer.failure)
    else {
      carried = `Deleted the feed “${feedName(props.feed)}”.`
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
    h("p", { role: "status", class: "notice-line" }, said),
    failure === undefined ? null : h(ErrorBox, { failure }))
}

// ---------------------------------------------------------------------------------------------
// Preview and delivery log
// ---------------------------------------------------------------------------------------------

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
  const fp = feedParams(props.bot, props.server, props.feed)
  const [data, reload] = useLoad(`preview:${props.module}:${props.feed}`, () =>
    call((c) => Effect.all({ server: c.general.server({ params: fp }), preview: group(c, props.module).preview({ params: fp }) })))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  return h(Page, { title: "Preview: what the feed would post now", crumbs: crumbs(name), actions: h("button", { type: "button", class: "secondary", onClick: reload }, "Fetch again") },
    h("p", { class: "muted" }, "The source's newest items, fetched now and judged by the feed's rules. Nothing is posted."),
    show(data, "the preview", reload, ({ preview }) =>
      preview.items.length === 0
        ? h("p", null, "The source has no item yet.")
        : h("ol", { class: "preview" }, ...preview.items.map((item) =>
          h("li", { key: item.id, class: `preview-item ${item.verdict}` },
            h("h2", null, item.title ?? item.url),
            h("p", null,
              h("span", { class: `badge ${item.verdict === "post" ? "active" : "disabled"}` }, item.verdict === "post" ? "Would post" : "Would skip"),
              " ", h("span", { class: "muted" }, `published ${when(item.published_at)}`)),
            h("p", { class: "hint" }, "Why:"),
            h("ul", null, ...item.reasons.map((r, i) => h("li", { key: String(i) }, r))),
            h("details", null,
              h("summary", null, "The message"),
              h("pre", { class: "message" },
                (item.message.username === null ? "" : `As ${item.message.username}\n`) + item.message.content)))))))
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

/** Previous / next links and where the user is. */
export const Pager = (props: { readonly page: number; readonly pageMax: number; readonly href: (page: number) => string }) =>
  props.pageMax <= 1 && props.page <= 1
    ? null
    : h("nav", { class: "pager", "aria-label": "Pages" },
      props.page > 1 ? h("a", { class: "button secondary", href: props.href(props.page - 1) }, "Previous page") : null,
      h("span", null, `Page ${props.page} of ${Math.max(1, props.pageMax)}`),
      props.page < props.pageMax ? h("a", { class: "button secondary", href: props.href(props.page + 1) }, "Next page") : null)
