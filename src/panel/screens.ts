/** Sign-in, the callback, and navigation: bots → servers → modules. */
import { h } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { Effect } from "effect"
import { BotId, ServerId } from "../http/client.ts"
import type { Module } from "../http/client.ts"
import { navigate } from "./router.ts"
import { auth, call, completeSignIn, signIn } from "./session.ts"
import { Avatar, Page, show, useLoad } from "./ui.ts"

export const SignIn = () => {
  const state = auth.value
  const heading = useRef<HTMLHeadingElement>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    document.title = "Sign in · Gateway control panel"
    heading.current?.focus()
  }, [])
  const returnTo = state.kind === "signedOut" && state.returnTo !== undefined ? state.returnTo : location.pathname.startsWith("/app/callback") ? "/app" : location.pathname + location.search
  const note = state.kind !== "signedOut"
    ? undefined
    : state.reason === "expired"
    ? "Your session has ended. Sign in again to go back to where you were."
    : state.reason === "signedOut"
    ? "You are signed out. Your tokens were revoked."
    : state.reason === "failed"
    ? state.message
    : undefined
  return h("main", { id: "main", class: "signin" },
    h("h1", { ref: heading, tabIndex: -1 }, "Gateway control panel"),
    h("p", null, "Configure the modules of your bots on the servers you manage."),
    note === undefined ? null : h("p", { class: state.kind === "signedOut" && state.reason === "failed" ? "error" : "notice", role: "status" }, note),
    h("button", {
      type: "button",
      disabled: busy,
      onClick: () => {
        setBusy(true)
        void signIn(returnTo)
      }
    }, busy ? "Opening the sign-in…" : "Sign in"))
}

export const Callback = () => {
  useEffect(() => {
    void completeSignIn(location.search).then((to) => navigate(to, { replace: true, force: true }))
  }, [])
  return h("main", { id: "main", class: "signin" }, h("h1", null, "Signing in…"), h("p", { role: "status" }, "Completing the sign-in."))
}

export const Bots = () => {
  const [bots, reload] = useLoad("bots", () => call((c) => c.general.bots()))
  return h(Page, { title: "Bots", crumbs: [{ label: "Bots" }] },
    h("p", { class: "muted" }, "Pick a bot to see the servers you may manage with it."),
    show(bots, "the bots", reload, ({ bots }) =>
      bots.length === 0
        ? h("p", null, "No bot is registered with this gateway yet.")
        : h("ul", { class: "cards" }, ...bots.map((b) =>
          h("li", { key: b.id },
            h("a", { class: "card", href: `/app/bots/${b.id}` },
              h(Avatar, { kind: "app-icons", id: b.id, icon: b.icon, name: b.name }),
              h("span", { class: "card-text" }, h("strong", null, b.name), h("span", { class: "muted" }, `Bot ${b.id}`))))))))
}

export const Servers = (props: { readonly bot: string }) => {
  const appClientId = BotId.make(props.bot)
  const [data, reload] = useLoad(`servers:${props.bot}`, () =>
    call((c) => Effect.all({ bots: c.general.bots(), servers: c.general.servers({ params: { appClientId } }) })))
  const botName = data.kind === "ok" ? data.value.bots.bots.find((b) => b.id === props.bot)?.name ?? `Bot ${props.bot}` : "Servers"
  return h(Page, { title: data.kind === "ok" ? `Servers of ${botName}` : "Servers", crumbs: [{ label: "Bots", href: "/app" }, { label: botName }] },
    show(data, "the servers", reload, ({ servers }) =>
      servers.servers.length === 0
        ? h("p", null, "You manage no server that this bot is in. You need to own the server, or hold Administrator or Manage Server there.")
        : h("ul", { class: "cards" }, ...servers.servers.map((s) =>
          h("li", { key: s.id },
            h("a", { class: "card", href: `/app/bots/${props.bot}/servers/${s.id}` },
              h(Avatar, { kind: "icons", id: s.id, icon: s.icon, name: s.name }),
              h("span", { class: "card-text" }, h("strong", null, s.name), h("span", { class: "muted" }, `Server ${s.id}`))))))))
}

const FEEDS_NEED = "Manage Server and Manage Webhooks"
const why = (m: Module) =>
  `Unavailable: you need ${m.name === "forms" ? "Manage Server" : FEEDS_NEED} (or Administrator) on this server.`

export const Modules = (props: { readonly bot: string; readonly server: string }) => {
  const params = { appClientId: BotId.make(props.bot), serverId: ServerId.make(props.server) }
  const base = `/app/bots/${props.bot}/servers/${props.server}`
  const [data, reload] = useLoad(`modules:${base}`, () =>
    call((c) => Effect.all({ server: c.general.server({ params }), modules: c.general.modules({ params }) })))
  const name = data.kind === "ok" ? data.value.server.name : "Server"
  return h(Page, {
    title: data.kind === "ok" ? `Modules on ${name}` : "Modules",
    crumbs: [{ label: "Bots", href: "/app" }, { label: "Servers", href: `/app/bots/${props.bot}` }, { label: name }],
    actions: h("a", { class: "button secondary", href: `${base}/audit` }, "Audit log")
  }, show(data, "the modules", reload, ({ modules }) =>
    h("ul", { class: "cards modules" }, ...modules.modules.map((m) =>
      h("li", { key: m.name, class: m.available ? "" : "unavailable" },
        m.available
          ? h("a", { class: "card", href: m.name === "forms" ? `${base}/forms` : `${base}/feeds/${m.name}` }, moduleBody(m, m.name === "forms" ? "Open the forms" : "Open the feeds"))
          : h("div", { class: "card" }, moduleBody(m, why(m))))))))
}

const moduleBody = (m: Module, note: string) => [
  h("img", { class: "avatar", src: m.image, alt: "", width: 40, height: 40 }),
  h("span", { class: "card-text" },
    h("strong", null, m.full_name),
    h("span", null, m.short_description),
    h("span", { class: m.available ? "muted" : "why" }, note))
]
