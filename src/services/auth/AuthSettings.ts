/** What sign-in and the token lifecycle need to know of the deployment (provided by src/layers/config/). */
import { Context } from "effect"

export class AuthSettings extends Context.Service<AuthSettings, {
  /**
   * PUBLIC_URL without a trailing slash: the platform calls back `${publicUrl}/auth/idp/callback`,
   * and over https the sign-in cookie is `__Host-` and Secure.
   */
  readonly publicUrl: string
  /** ALLOWED_REDIRECT_URIS: the client `redirect_uri`s a sign-in may end on (services/auth/RedirectAllowlist.ts). */
  readonly allowedRedirectUris: ReadonlyArray<string>
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
  readonly temporaryTokenTtlSeconds: number
  readonly signInStateTtlSeconds: number
}>()(
  // Stryker disable next-line StringLiteral: the service's key; any unique string serves
  "gateway/AuthSettings"
) {}
