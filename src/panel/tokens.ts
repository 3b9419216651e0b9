/**
 * This tab's token pair: where it is kept, and its refresh once for every tab of a sign-in
 * (decisions.md "Sign-in and tokens"; the sign-in itself is in session.ts):
 * - the access token lives in memory only. The refresh token is also in sessionStorage so that a
 *   reload of the tab keeps the user signed in: sessionStorage belongs to this tab (a new tab starts
 *   signed out, a duplicated tab gets a copy), is never sent to a server by the browser (no cookie, so
 *   no CSRF), and is deleted when the tab closes, unlike localStorage, where a 30-day token would
 *   outlive the visit on disk. A script running in the page could read it: the panel's CSP admits
 *   only the gateway's own scripts.
 * - refresh: before expiry, and on a 401, once for every tab of a sign-in. Tabs can share a sign-in
 *   (a duplicated tab, or one opened from this one, starts with a copy of sessionStorage), and a
 *   rotated refresh token must not be presented again (decisions.md: after 10 s that revokes the whole
 *   family). So one tab of a sign-in leads: it holds a Web Lock named after the sign-in for as long as
 *   it lives, it alone calls /auth/idp/token/refresh (on a timer, before expiry), and it sends each new
 *   pair to the other tabs on a BroadcastChannel; a tab that needs a token (at load, near expiry, on a
 *   401) asks the leader on that channel and adopts its answer. Why a leader and not a lock around each
 *   refresh: a tab that takes such a lock after another tab rotated cannot tell whether the new pair is
 *   still on its way (lock grants and channel messages are not ordered), so it would present the rotated
 *   token; a leader never has to guess. When the leader's tab closes, its lock passes to a waiting tab,
 *   which holds the newest pair. Without Web Locks (a page that is not a secure context) each tab leads
 *   for itself, and the gateway's 10 s grace keeps a raced refresh harmless.
 */
import { Result } from "effect"
import { anonymous, run } from "./gateway.ts"

const STORED = "bmg.panel.session"
const CHANNEL = "bmg.panel.tokens"

export interface Tokens {
  /** Random per sign-in: tabs with the same id share one token family. */
  readonly family: string
  readonly access: string
  readonly refresh: string
  /** Epoch ms. */
  readonly expiresAt: number
}

let tokens: Tokens | undefined
let timer: ReturnType<typeof setTimeout> | undefined
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : undefined

/** This tab's pair; undefined when signed out or not yet refreshed after a reload. */
export const current = (): Tokens | undefined => tokens

let signedOutElsewhere = () => {}
/** What the session does when another tab of this sign-in signed out (this tab has forgotten the pair). */
export const onSignedOutElsewhere = (f: () => void) => {
  signedOutElsewhere = f
}

/** Keeps `next` (undefined: forgets the pair); `broadcast`: and sends it to the other tabs of the sign-in. */
export const store = (next: Tokens | undefined, broadcast: boolean) => {
  const family = next?.family ?? tokens?.family ?? stored()?.family
  tokens = next
  if (next === undefined) sessionStorage.removeItem(STORED)
  else sessionStorage.setItem(STORED, JSON.stringify({ family: next.family, refresh: next.refresh }))
  if (broadcast && channel !== undefined) {
    channel.postMessage(next === undefined ? { family, signedOut: true } : next)
  }
  schedule()
  if (next !== undefined) settle(true)
}

export const stored = (): { readonly family: string; readonly refresh: string } | undefined => {
  try {
    const raw = JSON.parse(sessionStorage.getItem(STORED) ?? "null") as { family?: unknown; refresh?: unknown } | null
    return raw !== null && typeof raw.family === "string" && typeof raw.refresh === "string"
      ? { family: raw.family, refresh: raw.refresh }
      : undefined
  } catch {
    return undefined
  }
}

// The leader of this sign-in sent a new pair, or its refresh failed; another tab signed out, or needs a token.
channel?.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as Partial<Tokens> & { signedOut?: boolean; failed?: boolean; need?: boolean; stale?: string | null }
  const mine = tokens?.family ?? stored()?.family
  if (mine === undefined || data.family !== mine) return
  if (data.signedOut === true) {
    store(undefined, false)
    resign()
    settle(false)
    signedOutElsewhere()
  } else if (data.failed === true) {
    settle(false)
  } else if (data.need === true) {
    if (leading !== mine || tokens === undefined) return // a leader still signing in answers with its first pair
    // The asker's token was refused, or this one is about to expire: rotate; else the current pair will do.
    if (data.stale === tokens.access || tokens.expiresAt - Date.now() < 10_000) void rotate()
    else channel.postMessage(tokens)
  } else if (typeof data.access === "string" && typeof data.refresh === "string" && typeof data.expiresAt === "number") {
    store({ family: mine, access: data.access, refresh: data.refresh, expiresAt: data.expiresAt }, false)
  }
})

/** Refreshes 60 s before expiry (or at 80 % of a shorter life). */
const schedule = () => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  if (tokens === undefined || leading !== tokens.family) return
  const left = tokens.expiresAt - Date.now()
  const early = Math.min(60_000, left * 0.2)
  timer = setTimeout(() => void refresh(), Math.max(1_000, left - early))
}

/** Web Locks, when the page may use them (a secure context) and tabs can talk (BroadcastChannel). */
const locks = channel !== undefined && typeof navigator.locks?.request === "function" ? navigator.locks : undefined

/** The sign-in (family) this tab leads: it alone refreshes that family's tokens. */
let leading: string | undefined
let leadership: { readonly family: string; readonly stop: () => void } | undefined

/** Leads `family` now (without Web Locks), or once the tab leading it closes. */
export const lead = (family: string) => {
  if (leadership?.family === family) return
  resign()
  if (locks === undefined) {
    leading = family
    leadership = { family, stop: () => undefined }
    return
  }
  const abort = new AbortController()
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  leadership = {
    family,
    stop: () => {
      abort.abort()
      release()
    }
  }
  locks.request(`bmg-leader-${family}`, { signal: abort.signal }, async () => {
    leading = family
    schedule()
    // A tab that asked the previous leader and got no answer yet: this one answers itself.
    if (waiters.length > 0) void rotate()
    await held
    if (leading === family) leading = undefined
  }).catch(() => undefined) // aborted while waiting: the tab left this sign-in
}

export const resign = () => {
  leadership?.stop()
  leadership = undefined
  leading = undefined
}

/** Tabs waiting for the leader's pair: true when a pair came, false when the refresh failed. */
let waiters: Array<(ok: boolean) => void> = []
function settle(ok: boolean) {
  const waiting = waiters
  waiters = []
  for (const w of waiting) w(ok)
}

/** A follower's refresh: asks the leader for its pair (rotated when `stale` is its access token). */
const ask = (family: string, stale: string | undefined): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const answered = (ok: boolean) => {
      clearTimeout(timeout)
      resolve(ok)
    }
    // No answer (a leader frozen in a background tab): rotate here; the leader adopts the new pair.
    const timeout = setTimeout(() => {
      waiters = waiters.filter((w) => w !== answered)
      void rotate(true).then(resolve)
    }, 10_000)
    waiters.push(answered)
    channel!.postMessage({ family, need: true, stale: stale ?? null })
  })

let inFlight: Promise<boolean> | undefined

/**
 * The leader's refresh: rotates the pair once however many calls need it, and tells the other tabs.
 * `raced`: this tab may race another one (no Web Locks, or a leader that did not answer).
 */
const rotate = (raced = locks === undefined): Promise<boolean> => {
  inFlight ??= (async () => {
    const before = tokens?.refresh ?? stored()?.refresh
    const family = tokens?.family ?? stored()?.family
    if (before === undefined || family === undefined) return false
    const client = await anonymous()
    const answer = await run(client.auth.refresh({ headers: { "x-refresh-token": before } }))
    if (Result.isSuccess(answer)) {
      const t = answer.success
      store({ family, access: t.access_token, refresh: t.refresh_token, expiresAt: Date.now() + t.expires_in * 1000 }, true)
      return true
    }
    if (raced) {
      // A tab that raced this one may have won (the gateway refuses the loser without revoking): its
      // pair arrives on the channel; the refresh failed for the whole sign-in only if it does not.
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (tokens !== undefined && tokens.refresh !== before) return true
      if (locks !== undefined) return false
    }
    channel?.postMessage({ family, failed: true })
    settle(false)
    return false
  })().finally(() => {
    inFlight = undefined
  })
  return inFlight
}

/**
 * New tokens for this tab; false when the session is over. `stale`: the access token the gateway just
 * refused (a 401), so that a pair already replaced by another call is not rotated again.
 */
export const refresh = (stale?: string): Promise<boolean> => {
  const family = tokens?.family ?? stored()?.family
  if (family === undefined) return Promise.resolve(false)
  if (stale !== undefined && tokens !== undefined && tokens.access !== stale && tokens.expiresAt - Date.now() > 10_000) {
    return Promise.resolve(true)
  }
  lead(family)
  return leading === family ? rotate() : ask(family, stale)
}
