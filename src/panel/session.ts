/**
 * The panel's sign-in (decisions.md "Sign-in and tokens"):
 * - sign-in: /auth/idp/login with redirect_uri PUBLIC_URL/app/callback, PKCE S256 and a random state;
 *   the code is exchanged once with X-Code-Verifier.
 * - the tokens, where they are kept and their refresh across the tabs of a sign-in: tokens.ts.
 * - calls as the signed-in user: one refresh and retry on a 401; an ended session signs in again.
 * - sign-out revokes the token family at the gateway.
 */
import { signal } from "@preact/signals"
import type { Effect } from "effect"
import { Result } from "effect"
import type { Client } from "../http/client.ts"
import { anonymous, asUser, run } from "./gateway.ts"
import type { Failure } from "./problems.ts"
import { current, lead, onSignedOutElsewhere, refresh, resign, store, stored } from "./tokens.ts"

export { run } from "./gateway.ts"

const SIGN_IN = "bmg.panel.signin"

export const CALLBACK_PATH = "/app/callback"

export type AuthState =
  | { readonly kind: "loading" }
  | { readonly kind: "signedIn" }
  | { readonly kind: "signedOut"; readonly reason: "new" | "signedOut" | "expired" | "failed"; readonly message?: string; readonly returnTo?: string }

export const auth = signal<AuthState>({ kind: "loading" })

// Another tab of this sign-in signed out: so does this one.
onSignedOutElsewhere(() => {
  auth.value = { kind: "signedOut", reason: "signedOut" }
})

let clients: { readonly access: string; readonly client: Client } | undefined

const publicUrl = (): string => document.querySelector<HTMLMetaElement>("meta[name=gateway-public-url]")?.content || location.origin

const random = (bytes: number) => base64url(crypto.getRandomValues(new Uint8Array(bytes)))
const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
const challengeOf = async (verifier: string) =>
  base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))))

/** The typed client as the signed-in user (one client per access token). */
export const client = async (): Promise<Client | undefined> => {
  const held = current()
  if (held === undefined || held.expiresAt - Date.now() < 5_000) {
    if (!(await refresh())) return undefined
  }
  const access = current()!.access
  if (clients?.access !== access) {
    clients = { access, client: await asUser(access) }
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
  const access = current()?.access
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
  const used = current()?.access
  const answer = await run(f(first))
  if (Result.isSuccess(answer) || answer.failure.status !== 401) return answer
  if (!(await refresh(used))) return ended()
  const again = await client()
  if (again === undefined) return ended()
  const retried = await run(f(again))
  return Result.isFailure(retried) && retried.failure.status === 401 ? ended() : retried
}
