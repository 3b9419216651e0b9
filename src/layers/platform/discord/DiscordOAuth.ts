/**
 * Discord's OAuth2 as the gateway signs people in: the authorize URL (PKCE with S256, scopes
 * `identify guilds`) and the token endpoint (code exchange, refresh, revocation), each a form call
 * that DiscordRest sends with the client's Basic auth.
 */
import { Effect, Redacted, Schema } from "effect"
import type { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import type { DiscordRest } from "./DiscordRest.ts"
import { Tokens, toTokens } from "./DiscordSchemas.ts"

export interface DiscordOAuthOptions {
  readonly clientId: string
  /** Default `https://discord.com/oauth2/authorize`. */
  readonly authorizeUrl?: string | undefined
}

export const makeDiscordOAuth = (
  options: DiscordOAuthOptions,
  { request }: DiscordRest
): Pick<ChatPlatform["Service"], "authorizeUrl" | "exchangeCode" | "refreshToken" | "revokeToken"> => {
  const authorizeBase = options.authorizeUrl ?? "https://discord.com/oauth2/authorize"
  // The token endpoints are counted under the application, not a user.
  const oauth = (path: string, form: Record<string, string>) =>
    ({
      method: "POST",
      path,
      auth: { _tag: "None" },
      form,
      target: { identity: `app:${options.clientId}`, route: `POST ${path}`, major: "" }
    }) as const

  return {
    authorizeUrl: ({ codeChallenge, redirectUri, state }) => {
      const url = new URL(authorizeBase)
      url.searchParams.set("response_type", "code")
      url.searchParams.set("client_id", options.clientId)
      url.searchParams.set("scope", "identify guilds")
      url.searchParams.set("redirect_uri", redirectUri)
      url.searchParams.set("state", state)
      url.searchParams.set("code_challenge", codeChallenge)
      url.searchParams.set("code_challenge_method", "S256")
      return url.toString()
    },
    exchangeCode: ({ code, codeVerifier, redirectUri }) =>
      request(
        oauth("/oauth2/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier
        }),
        Tokens
      ).pipe(Effect.map(toTokens)),
    refreshToken: (refreshToken) =>
      request(oauth("/oauth2/token", { grant_type: "refresh_token", refresh_token: Redacted.value(refreshToken) }), Tokens)
        .pipe(Effect.map(toTokens)),
    revokeToken: (token) =>
      request(
        oauth("/oauth2/token/revoke", { token: Redacted.value(token), token_type_hint: "access_token" }),
        Schema.Unknown
      ).pipe(Effect.asVoid)
  }
}
