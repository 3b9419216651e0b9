/** Shared pieces of the screens: the page frame, loading and error states, avatars, times, the pager. */
import { h } from "preact"
import type { ComponentChildren, VNode } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { Result } from "effect"
import type { Failure } from "./problems.ts"
import { auth, signOut } from "./session.ts"
import { navigate } from "./router.ts"

export interface Crumb {
  readonly label: string
  readonly href?: string
}

/** The frame of a signed-in screen: header, breadcrumbs, one h1 that takes the focus on arrival. */
export const Page = (props: { readonly title: string; readonly crumbs: ReadonlyArray<Crumb>; readonly children?: ComponentChildren; readonly actions?: ComponentChildren }) => {
  const heading = useRef<HTMLHeadingElement>(null)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  useEffect(() => {
    document.title = `${props.title} · Gateway control panel`
    // Not scrolled to: a message the screen shows on arrival ("Created the form") may be lower down (StatusLine).
    heading.current?.focus({ preventScroll: true })
  }, [props.title])
  return h("div", { class: "frame" },
    h("a", { class: "skip-link", href: "#main" }, "Skip to content"),
    h("header", { class: "top" },
      h("a", { class: "brand", href: "/app" }, "Gateway control panel"),
      auth.value.kind === "signedIn"
        ? h("button", {
          type: "button",
          class: "secondary",
          onClick: async () => {
            const failed = await signOut()
            if (failed !== undefined) setFailure(`Signed out here, but the gateway did not confirm the revocation: ${failed.message}`)
            navigate("/app", { force: true })
          }
        }, "Sign out")
        : null),
    h("nav", { "aria-label": "Breadcrumb", class: "crumbs" },
      h("ol", null, ...props.crumbs.map((c, i) =>
        h("li", { key: String(i) },
          c.href === undefined || i === props.crumbs.length - 1
            ? h("span", { "aria-current": i === props.crumbs.length - 1 ? "page" : undefined }, c.label)
            : h("a", { href: c.href }, c.label))))),
    h("main", { id: "main" },
      h("div", { class: "title-row" }, h("h1", { ref: heading, tabIndex: -1 }, props.title), props.actions),
      failure === undefined ? null : h("p", { class: "error", role: "alert" }, failure),
      props.children))
}

export const Loading = (props: { readonly what: string }) => h("p", { class: "muted", role: "status" }, `Loading ${props.what}…`)

/**
 * A message that answers what the person just did, brought into view when it appears or changes: it
 * may be rendered far from where they are looking (below the fold after a save, or on the next screen).
 */
export const useInView = <E extends HTMLElement>(shown: unknown) => {
  const ref = useRef<E>(null)
  useEffect(() => {
    const el = ref.current
    if (shown === "" || shown === undefined || el === null) return
    const box = el.getBoundingClientRect()
    if (box.top < 0 || box.bottom > innerHeight) el.scrollIntoView({ block: "center" })
  }, [shown])
  return ref
}

/** What an action did ("Saved the form …"), said to screen readers and kept in view; hidden while empty. */
export const StatusLine = (props: { readonly text: string }) =>
  h("p", { role: "status", class: "notice-line", ref: useInView<HTMLParagraphElement>(props.text) }, props.text)

/** An API failure in words, with a way to try again; brought into view when it appears. */
export const ErrorBox = (props: { readonly failure: Failure; readonly retry?: () => void }) =>
  h("div", { class: "error", role: "alert", ref: useInView<HTMLDivElement>(props.failure) },
    h("p", null, props.failure.message),
    props.retry === undefined ? null : h("button", { type: "button", class: "secondary", onClick: props.retry }, "Try again"))

type Loaded<A> = { readonly kind: "loading" } | { readonly kind: "ok"; readonly value: A } | { readonly kind: "failed"; readonly failure: Failure }

/** Loads once per `key`; `reload` loads again. */
export const useLoad = <A>(key: string, load: () => Promise<Result.Result<A, Failure>>): [Loaded<A>, () => void] => {
  const [state, setState] = useState<Loaded<A>>({ kind: "loading" })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    setState({ kind: "loading" })
    void load().then((r) => {
      if (!live) return
      setState(Result.isSuccess(r) ? { kind: "ok", value: r.success } : { kind: "failed", failure: r.failure })
    })
    return () => {
      live = false
    }
  }, [key, round])
  return [state, () => setRound((n) => n + 1)]
}

/** Renders a loaded value, or its loading or failure state. */
export const show = <A>(state: Loaded<A>, what: string, retry: () => void, ok: (value: A) => VNode<any> | null): VNode<any> | null =>
  state.kind === "loading" ? h(Loading, { what }) : state.kind === "failed" ? h(ErrorBox, { failure: state.failure, retry }) : ok(state.value)

const cdn = () => document.querySelector<HTMLMetaElement>("meta[name=gateway-icon-cdn]")?.content ?? ""

/** The platform icon when the gateway names an icon host (not in the sandbox), else the initials. */
export const Avatar = (props: { readonly kind: "icons" | "app-icons"; readonly id: string; readonly icon: string | null; readonly name: string }) => {
  const base = cdn()
  if (props.icon !== null && base !== "") {
    return h("img", { class: "avatar", src: `${base}/${props.kind}/${props.id}/${props.icon}.png?size=64`, alt: "", width: 40, height: 40 })
  }
  const initials = props.name.split(/\s+/).filter((w) => w !== "").slice(0, 2).map((w) => [...w][0]!.toUpperCase()).join("")
  const hue = [...props.id].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 360, 7)
  return h("span", { class: "avatar", "aria-hidden": "true", style: `--hue:${hue}` }, initials || "?")
}

/** A UTC ISO instant in the user's locale and time zone. */
export const when = (iso: string | null, none = "never") => (iso === null ? none : new Date(iso).toLocaleString())

/** Previous / next links and where the user is. */
export const Pager = (props: { readonly page: number; readonly pageMax: number; readonly href: (page: number) => string }) =>
  props.pageMax <= 1 && props.page <= 1
    ? null
    : h("nav", { class: "pager", "aria-label": "Pages" },
      props.page > 1 ? h("a", { class: "button secondary", href: props.href(props.page - 1) }, "Previous page") : null,
      h("span", null, `Page ${props.page} of ${Math.max(1, props.pageMax)}`),
      props.page < props.pageMax ? h("a", { class: "button secondary", href: props.href(props.page + 1) }, "Next page") : null)
