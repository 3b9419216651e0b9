/**
 * The panel's sign-in and tokens (decisions.md "Sign-in and tokens"):
 * - sign-in: /auth/idp/login with redirect_uri PUBLIC_URL/app/callback, PKCE S256 and a random state;
 *   the code is exchanged once with X-Code-Verifier.
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
 * - sign-out revokes the token family at the gateway.
 */
import { signal } from "@preact/signals"
import { Effect, Result } from "effect"
import { makeClient } from "../http/client.ts"
import type { Client } from "../http/client.ts"
import type { Failure } from "./problems.ts"
import { toFailure } from "./problems.ts"

const USER_AGENT = "bot-module-gateway-panel/1.0"
const STORED = "bmg.panel.session"
const SIGN_IN = "bmg.panel.signin"
const CHANNEL = "bmg.panel.tokens"

export const CALLBACK_PATH = "/app/callback"

interface Tokens {
  /** Random per sign-in: tabs with the same id share one token family. */
  readonly family: string
  readonly access: string
  readonly refresh: string
  /** Epoch ms. */
  readonly expiresAt: number
}

export type AuthState =
  | { readonly kind: "loading" }
  | { readonly kind: "signedIn" }
  | { readonly kind: "signedOut"; readonly reason: "new" | "signedOut" | "expired" | "failed"; readonly message?: string; readonly returnTo?: string }

export const auth = signal<AuthState>({ kind: "loading" })

let tokens: Tokens | undefined
let timer: ReturnType<typeof setTimeout> | undefined
let clients: { readonly access: string; readonly client: Client } | undefined
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : undefined

const publicUrl = (): string => document.querySelector<HTMLMetaElement>("meta[name=gateway-public-url]")?.content || location.origin
const baseUrl = () => location.origin

const random = (bytes: number) => base64url(crypto.getRandomValues(new Uint8Array(bytes)))
const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
const challengeOf = async (verifier: string) =>
  base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))))

/** Runs a call of the typed client; the failure in words. */
export const run = async <A, E>(effect: Effect.Effect<A, E>): Promise<Result.Result<A, Failure>> => {
  try {
    const result = await Effect.runPromise(Effect.result(effect))
    return Result.isSuccess(result) ? Result.succeed(result.success) : Result.fail(toFailure(result.failure))
  } catch (defect) {
    return Result.fail(toFailure(defect))
  }
}

const anonymous = () => Effect.runPromise(makeClient({ baseUrl: baseUrl(), userAgent: USER_AGENT }))

const store = (next: Tokens | undefined, broadcast: boolean) => {
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

const stored = (): { readonly family: string; readonly refresh: string } | undefined => {
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
    auth.value = { kind: "signedOut", reason: "signedOut" }
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
const lead = (family: string) => {
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

const resign = () => {
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

/** The typed client as the signed-in user (one client per access token). */
export const client = async (): Promise<Client | undefined> => {
  if (tokens === undefined || tokens.expiresAt - Date.now() < 5_000) {
    if (!(await refresh())) return undefined
  }
  const access = tokens!.access
  if (clients?.access !== access) {
    clients = { access, client: await Effect.runPromise(makeClient({ baseUrl: baseUrl(), userAgent: USER_AGENT, accessToken: access })) }
  }
  return clients.client
}

const here = () => location.pathname + location.search

/** The session is over (refresh refused): sign in again, then back to where the user was. */
export const expire = (returnTo = here()) => {
  store(undefined, false)
  resign()
  auth.value = { kind: "signedOut", reason: "expired", returnTo }
}

/** Sends the browser to the gateway's sign-in with PKCE S256 and a state; back to `returnTo` after. */
export const signIn = async (returnTo: string) => {
  const verifier = random(32)
  const state = random(16)
  sessionStorage.setItem(SIGN_IN, JSON.stringify({ verifier, state, returnTo }))
  const query = new URLSearchParams({
    redirect_uri: publicUrl() + CALLBACK_PATH,
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256"
  })
  location.assign(`/auth/idp/login?${query.toString()}`)
}

/** On /app/callback: checks the state, exchanges the code; the path to go back to. */
export const completeSignIn = async (search: string): Promise<string> => {
  const params = new URLSearchParams(search)
  const pending = (() => {
    try {
      return JSON.parse(sessionStorage.getItem(SIGN_IN) ?? "null") as { verifier: string; state: string; returnTo: string } | null
    } catch {
      return null
    }
  })()
  sessionStorage.removeItem(SIGN_IN)
  const failed = (message: string) => {
    auth.value = { kind: "signedOut", reason: "failed", message }
    return "/app"
  }
  if (pending === null || params.get("state") !== pending.state) {
    return failed("This sign-in was not started in this tab (or was already used). Sign in again.")
  }
  const error = params.get("error")
  if (error !== null) {
    return failed(error === "access_denied" ? "The sign-in was cancelled." : `The sign-in failed (${error}). Try again.`)
  }
  const code = params.get("code")
  if (code === null) return failed("The sign-in answer has no code. Try again.")
  const answer = await run((await anonymous()).auth.token({ headers: { authorization: code, "x-code-verifier": pending.verifier } }))
  if (Result.isFailure(answer)) return failed(`The sign-in could not be completed: ${answer.failure.message}`)
  const t = answer.success
  const family = random(12)
  lead(family)
  store({ family, access: t.access_token, refresh: t.refresh_token, expiresAt: Date.now() + t.expires_in * 1000 }, false)
  auth.value = { kind: "signedIn" }
  return pending.returnTo.startsWith("/app") ? pending.returnTo : "/app"
}

/** At start: a stored refresh token (a reload) signs the tab in again. */
export const restore = async () => {
  if (stored() === undefined) {
    auth.value = { kind: "signedOut", reason: "new" }
    return
  }
  if (await refresh()) auth.value = { kind: "signedIn" }
  else expire()
}

/** Revokes the token family at the gateway and forgets it here and in the tabs that share it. */
export const signOut = async (): Promise<Failure | undefined> => {
  const access = tokens?.access
  let failure: Failure | undefined
  if (access !== undefined) {
    const answer = await run((await anonymous()).auth.revoke({ headers: { authorization: `Bearer ${access}` } }))
    if (Result.isFailure(answer)) failure = answer.failure
  }
  store(undefined, true)
  resign()
  clients = undefined
  auth.value = { kind: "signedOut", reason: "signedOut" }
  return failure
}

/** A call through the typed client as the signed-in user: one refresh and retry on a 401; an ended session → sign in again. */
export const call = async <A, E>(f: (client: Client) => Effect.Effect<A, E>): Promise<Result.Result<A, Failure>> => {
  const ended = (): Result.Result<A, Failure> => {
    expire()
    return Result.fail({ status: 401, message: "Your session has ended. Sign in again.", problems: [] })
  }
  const first = await client()
  if (first === undefined) return ended()
  const used = tokens?.access
  const answer = await run(f(first))
  if (Result.isSuccess(answer) || answer.failure.status !== 401) return answer
  if (!(await refresh(used))) return ended()
  const again = await client()
  if (again === undefined) return ended()
  const retried = await run(f(again))
  return Result.isFailure(retried) && retried.failure.status === 401 ? ended() : retried
}
