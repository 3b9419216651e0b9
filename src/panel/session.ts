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
 * - refresh: before expiry, and on a 401; tabs holding the same sign-in (a duplicated tab) take a
 *   Web Lock per sign-in so that only one rotates, and hand the new pair to the others on a
 *   BroadcastChannel (a rotated refresh token must not be presented again).
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

// Another tab of the same sign-in rotated the tokens, or signed out.
channel?.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as Partial<Tokens> & { signedOut?: boolean }
  const mine = tokens?.family ?? stored()?.family
  if (mine === undefined || data.family !== mine) return
  if (data.signedOut === true) {
    store(undefined, false)
    auth.value = { kind: "signedOut", reason: "signedOut" }
  } else if (typeof data.access === "string" && typeof data.refresh === "string" && typeof data.expiresAt === "number") {
    store({ family: mine, access: data.access, refresh: data.refresh, expiresAt: data.expiresAt }, false)
  }
})

/** Refreshes 60 s before expiry (or at 80 % of a shorter life). */
const schedule = () => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  if (tokens === undefined) return
  const left = tokens.expiresAt - Date.now()
  const lead = Math.min(60_000, left * 0.2)
  timer = setTimeout(() => void refresh(), Math.max(1_000, left - lead))
}

const withLock = <A>(name: string, f: () => Promise<A>): Promise<A> =>
  typeof navigator.locks?.request === "function" ? navigator.locks.request(name, f) : f()

let inFlight: Promise<boolean> | undefined

/** Rotates the tokens once for every tab of this sign-in; false when the session is over. */
export const refresh = (): Promise<boolean> => {
  inFlight ??= (async () => {
    const before = tokens?.refresh ?? stored()?.refresh
    const family = tokens?.family ?? stored()?.family
    if (before === undefined || family === undefined) return false
    return withLock(`bmg-refresh-${family}`, async () => {
      // Rotated by another tab while this one waited for the lock: take its pair.
      if (tokens !== undefined && tokens.refresh !== before && tokens.expiresAt - Date.now() > 10_000) return true
      const client = await anonymous()
      const answer = await run(client.auth.refresh({ headers: { "x-refresh-token": before } }))
      if (Result.isSuccess(answer)) {
        const t = answer.success
        store({ family, access: t.access_token, refresh: t.refresh_token, expiresAt: Date.now() + t.expires_in * 1000 }, true)
        return true
      }
      // A tab that raced this one may have won: its pair arrives on the channel.
      await new Promise((resolve) => setTimeout(resolve, 300))
      return tokens !== undefined && tokens.refresh !== before
    })
  })().finally(() => {
    inFlight = undefined
  })
  return inFlight
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
  store({ family: random(12), access: t.access_token, refresh: t.refresh_token, expiresAt: Date.now() + t.expires_in * 1000 }, false)
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
  const answer = await run(f(first))
  if (Result.isSuccess(answer) || answer.failure.status !== 401) return answer
  if (!(await refresh())) return ended()
  const again = await client()
  if (again === undefined) return ended()
  const retried = await run(f(again))
  return Result.isFailure(retried) && retried.failure.status === 401 ? ended() : retried
}
