/** Paths under /app as a signal; links are plain `<a href>` that the document's click handler routes. */
import { signal } from "@preact/signals"

export const path = signal(location.pathname + location.search)

/** The editor's unsaved-changes guard: a message while something is unsaved. */
let guard: (() => string | undefined) | undefined
export const setGuard = (g: (() => string | undefined) | undefined) => {
  guard = g
}
const allowed = () => {
  const message = guard?.()
  return message === undefined || confirm(message)
}

export const navigate = (to: string, options: { readonly replace?: boolean; readonly force?: boolean } = {}) => {
  if (options.force !== true && !allowed()) return
  guard = undefined
  if (options.replace === true) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  path.value = to
  window.scrollTo(0, 0)
}

export const startRouter = () => {
  addEventListener("popstate", () => {
    path.value = location.pathname + location.search
  })
  addEventListener("beforeunload", (event) => {
    if (guard?.() !== undefined) event.preventDefault()
  })
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const a = (event.target as Element | null)?.closest?.("a")
    const href = a?.getAttribute("href")
    if (a === null || a === undefined || href === null || href === undefined || !href.startsWith("/app") || a.target !== "") return
    event.preventDefault()
    navigate(href)
  })
}

/** `/app/bots/1/servers/2` against `/app/bots/:bot/servers/:server`: the parameters, or undefined. */
export const match = (pattern: string, at: string): Record<string, string> | undefined => {
  const want = pattern.split("/")
  const got = at.split("?")[0]!.replace(/\/+$/, "").split("/")
  if (want.length !== got.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(":")) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!)
    else if (want[i] !== got[i]) return undefined
  }
  return params
}
