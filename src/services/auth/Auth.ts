/**
 * Sign-in and the token lifecycle (decisions.md "Sign-in and tokens"). The gateway is the client of
 * the chat platform's OAuth2 and the authorization server of its own tokens. One service for the
 * auth handlers, built from three pieces: the sign-in redirects (AuthSignIn.ts), the gateway's
 * tokens (AuthTokens.ts) and the platform token of a sign-in (AuthPlatformToken.ts), put together
 * by AuthLive.ts (the pieces type themselves by this shape; the layer lives apart so no import cycles).
 */
import { Context } from "effect"
import type { Duration, Effect, Redacted } from "effect"
import type { BadRequest, RequestTimeout, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { Principal } from "../../domain/auth/Principal.ts"
import type { Success, TokenCheck, TokenResponse } from "../../domain/auth/Token.ts"

/** The sign-in cookie to set on the login answer. */
export interface SignInCookie {
  readonly name: string
  readonly value: string
  readonly options: {
    readonly httpOnly: true
    readonly sameSite: "lax"
    readonly path: "/"
    readonly secure: boolean
    readonly maxAge: Duration.Duration
  }
}

/** The login's query parameters as the client sent them (AuthSignIn.ts checks each). */
export interface LoginQuery {
  readonly redirectUri: string | undefined
  readonly state: string | undefined
  readonly codeChallenge: string | undefined
  readonly codeChallengeMethod: string | undefined
}

export type PlatformTokenError = Unauthorized | RequestTimeout | ServiceUnavailable

export class Auth extends Context.Service<Auth, {
  /** The cookie name: `__Host-bmg_signin` over https, `bmg_signin` over plain http (`__Host-` needs Secure). */
  readonly cookieName: string
  /** GET /auth/idp/login, its query as sent: every problem in one 400, else nothing (nothing stored either). */
  readonly checkLogin: (input: LoginQuery) => Effect.Effect<void, BadRequest>
  /** GET /auth/idp/login: the platform's authorize URL and the cookie binding this browser (after `checkLogin`'s checks). */
  readonly login: (input: LoginQuery) => Effect.Effect<{ readonly location: string; readonly cookie: SignInCookie }, BadRequest | ServiceUnavailable>
  /** GET /auth/idp/callback: where to send the browser (the client's redirect_uri with `code` or `error`). */
  readonly callback: (input: {
    readonly code: string | undefined
    readonly state: string | undefined
    readonly error: string | undefined
    readonly cookie: string | undefined
  }) => Effect.Effect<{ readonly location: string }, BadRequest | ServiceUnavailable>
  /** POST /auth/idp/token: the temporary token (once, with its PKCE verifier) for an access and refresh pair. */
  readonly exchange: (input: {
    readonly authorization: string | undefined
    readonly codeVerifier: string | undefined
  }) => Effect.Effect<TokenResponse, Unauthorized | ServiceUnavailable>
  /** POST /auth/idp/token/check: what is left of an access token. */
  readonly check: (authorization: string | undefined) => Effect.Effect<TokenCheck, Unauthorized | ServiceUnavailable>
  /** POST /auth/idp/token/refresh: a new pair; a refresh token used twice ends the sign-in. */
  readonly refresh: (refreshToken: string | undefined) => Effect.Effect<TokenResponse, Unauthorized | ServiceUnavailable>
  /** POST /auth/idp/token/revoke: ends the sign-in of an access token (here and at the platform). */
  readonly revoke: (authorization: string | undefined) => Effect.Effect<Success, ServiceUnavailable>
  /**
   * The platform access token of the principal's sign-in, refreshed at the platform when (nearly)
   * expired: once per family even under concurrency (single flight here, compare-and-set in storage).
   */
  readonly platformToken: (principal: Principal) => Effect.Effect<Redacted.Redacted<string>, PlatformTokenError>
  /**
   * After the platform refused `rejected` (a 401 on the user's token): the stored token when another
   * request has replaced it already, else one refresh at the platform (shared as above). Fails
   * (401, sign in again) only when that refresh is refused.
   */
  readonly renewPlatformToken: (
    principal: Principal,
    rejected: Redacted.Redacted<string>
  ) => Effect.Effect<Redacted.Redacted<string>, PlatformTokenError>
}>()(
  // Stryker disable next-line StringLiteral: the service's key; any unique string serves
  "gateway/Auth"
) {}
