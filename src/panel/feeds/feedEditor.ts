/**
 * A feed's editor: create (the source, with a lookup, and the webhook by channel or URL) and its
 * module's options; for a saved feed, its status and actions above (feedInsight.ts).
 */
import { h } from "preact"
import { useState } from "preact/hooks"
import { Effect, Result } from "effect"
import { FeedId, isLookupModule } from "../../http/client.ts"
import type { Feed, FeedModuleName, FeedStatus, Server } from "../../http/client.ts"
import { carry, crumbsOf, feedName, feedParams, group, MODULE_LABEL, paramsOf, serverBase, takeCarried } from "./feedCommon.ts"
import { FeedSummary } from "./feedInsight.ts"
import type { DraftOptions } from "./feedOptions.ts"
import { draftOf, optionKeys, OptionsFields, optionsBody } from "./feedOptions.ts"
import { ErrorText, errorsOf, Field, idOf, invalid, SaveProblems, useProblems, useSaveGuards, valueOf } from "../fields.ts"
import { navigate } from "../router.ts"
import { call } from "../session.ts"
import { Page, show, StatusLine, useLoad } from "../ui.ts"

/** What to type as the source, per module (the lookup names the user; the feed stores the id). */
const IDENTIFIER: Record<FeedModuleName, { readonly label: string; readonly hint: string; readonly lookup?: string }> = {
  photo: { label: "Account id", hint: "The photo account's id. Find it from the user name below.", lookup: "Photo user name" },
  forum: { label: "Forum name", hint: "The forum's name, as in its address (for example SandboxGaming)." },
  rss: { label: "Feed URL", hint: "The address of an RSS or Atom feed." },
  streaming: { label: "Streamer id", hint: "The streamer's id. Find it from the login below.", lookup: "Streamer login" },
  microblog: { label: "Account id", hint: "The account's id. Find it from the user name below.", lookup: "Microblog user name" },
  video: { label: "Channel id", hint: "The channel's id. Find it from its @handle or id below.", lookup: "Channel @handle or id" }
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
  const [busy, setBusy] = useState(false)
  const [status, setStatus] = useState(takeCarried)
  const dirty = JSON.stringify(options) !== JSON.stringify(saved) || (creating && (identifier !== "" || url !== ""))

  const known = new Set<string>(["feed_identifier", "webhook_channel", "webhook_url", "webhook_options", ...optionKeys(m).map((k) => `webhook_options.${k}`)])
  // An edit clears that field's error (the webhook's two fields share "one of them is required").
  const { problems, setProblems, failure, setFailure, fixed } = useProblems(known)
  const errors = errorsOf(problems, known)
  const summary = useSaveGuards("feed", failure, dirty)
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
      carry(`Created the feed “${feedName(answer.success)}”.`)
      navigate(`${props.base}/${answer.success.id}`, { replace: true, force: true })
    } else setStatus(`Saved the options of “${feedName(answer.success)}”.`)
  }

  return h("div", null,
    creating || feedStatus === undefined || feed === undefined ? null : h(FeedSummary, { feed, status: feedStatus, server, base: `${props.base}/${props.feedId}`, bot: props.bot, serverId: props.server, module: m, reload: props.reload }),
    h("form", { class: "editor", onSubmit: save, noValidate: true },
      failure === undefined ? null : h(SaveProblems, { what: "feed", failure, problems, known, summary }),
      creating
        ? h("section", { "aria-labelledby": "sec-source" },
          h("h2", { id: "sec-source" }, "Source"),
          isLookupModule(m) ? h(UserLookupField, { bot: props.bot, server: props.server, module: m, found: setIdentifier }) : null,
          h(Field, { path: "feed_identifier", label: IDENTIFIER[m].label, hint: IDENTIFIER[m].hint, errors },
            h("input", { id: idOf("feed_identifier"), type: m === "rss" ? "url" : "text", maxLength: 2048, value: identifier, ...invalid("feed_identifier", errors), onInput: (e: Event) => {
              fixed("feed_identifier")
              setIdentifier(valueOf(e))
            } })))
        : null,
      creating
        ? h("section", { "aria-labelledby": "sec-webhook" },
          h("h2", { id: "sec-webhook" }, "Where to post"),
          h("fieldset", { class: "checks" },
            h("legend", null, "Post through"),
            h("label", { class: "check" }, h("input", { type: "radio", name: "target", checked: target === "channel", onChange: () => {
              fixed("webhook_channel", "webhook_url")
              setTarget("channel")
            } }), " A channel (the bot finds or creates its webhook)"),
            h("label", { class: "check" }, h("input", { type: "radio", name: "target", checked: target === "url", onChange: () => {
              fixed("webhook_channel", "webhook_url")
              setTarget("url")
            } }), " An existing webhook's URL")),
          target === "channel"
            ? h(Field, { path: "webhook_channel", label: "Channel", errors },
              h("select", { id: idOf("webhook_channel"), value: channel, ...invalid("webhook_channel", errors), onChange: (e: Event) => {
                fixed("webhook_channel", "webhook_url")
                setChannel(valueOf(e))
              } },
                ...postable.map((c) => h("option", { key: c.id, value: c.id }, `#${c.name}`))))
            : h(Field, { path: "webhook_url", label: "Webhook URL", hint: "It holds the webhook's secret: it is sent to the gateway only, never shown again.", errors },
              h("input", { id: idOf("webhook_url"), type: "url", autocomplete: "off", spellcheck: false, maxLength: 2048, value: url, ...invalid("webhook_url", errors), onInput: (e: Event) => {
                fixed("webhook_channel", "webhook_url")
                setUrl(valueOf(e))
              } })))
        : null,
      h("section", { "aria-labelledby": "sec-options" },
        h("h2", { id: "sec-options" }, "Options"),
        h("p", { class: "hint" }, `Only the options of the ${MODULE_LABEL[m]} module; each starts at its default.`),
        h(ErrorText, { path: "webhook_options", errors }),
        h(OptionsFields, {
          module: m,
          draft: options,
          set: (k, v) => {
            fixed(`webhook_options.${k}`)
            setOptions((d) => ({ ...d, [k]: v }))
          },
          errors,
          bot: props.bot,
          server: props.server,
          roles: server.roles.filter((r) => r.id !== server.id)
        })),
      h(StatusLine, { text: status }),
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
