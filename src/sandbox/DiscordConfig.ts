/**
 * Settings of the sandbox chat platform (re-exported by Sandbox.ts as `SandboxConfig`). A
 * `Context.Reference`: the defaults apply unless a layer provides another value, e.g.
 * `Layer.provide(SandboxRoutes, Layer.succeed(SandboxConfig, { ...SandboxConfig.defaultValue(), userTokenTtlSeconds: 1 }))`.
 */
import { Context } from "effect"

export interface BucketSize {
  /** Requests allowed per window. */
  readonly limit: number
  /** Window length in milliseconds (fixed window, starting at the first request). */
  readonly windowMs: number
}

export interface SandboxConfigShape {
  /** Per-route buckets, keyed by route name as in stats, e.g. `"POST /channels/{id}/webhooks"`. */
  readonly buckets: Readonly<Record<string, BucketSize>>
  /** Bucket of any Discord route not named in `buckets`. */
  readonly defaultBucket: BucketSize
  /** Global limit per token (bot or user), across all routes. */
  readonly globalLimit: BucketSize
  /** Lifetime of issued OAuth2 access tokens (`expires_in`). */
  readonly userTokenTtlSeconds: number
  /** Lifetime of OAuth2 authorization codes. */
  readonly authorizationCodeTtlSeconds: number
  /** Most webhooks per channel (Discord: 15). */
  readonly maxWebhooksPerChannel: number
  /**
   * Origin used in webhook `url`s (e.g. `http://127.0.0.1:3000`). When absent, the request's Host
   * header is used.
   */
  readonly publicOrigin?: string | undefined
  /**
   * Origin of the bots' Interactions Endpoint URLs (`{origin}/interactions/{botId}`). Default: the
   * public origin, i.e. the gateway that serves the sandbox; tests point it at their own receiver.
   */
  readonly interactionsOrigin?: string | undefined
  /**
   * The OAuth client's registered redirect URIs: the authorize page redirects only to one of them
   * (exact match), like the real platform. SandboxMode registers the gateway's own callback,
   * `PUBLIC_URL/auth/idp/callback`. When absent (a sandbox served alone, in tests): any loopback
   * `http://` URL.
   */
  readonly redirectUris?: ReadonlyArray<string> | undefined
}

export const defaultSandboxConfig: SandboxConfigShape = {
  buckets: {
    "POST /channels/{id}/webhooks": { limit: 5, windowMs: 1000 },
    "DELETE /webhooks/{id}": { limit: 5, windowMs: 1000 },
    "POST /webhooks/{id}/{token}": { limit: 5, windowMs: 2000 }
  },
  defaultBucket: { limit: 50, windowMs: 1000 },
  globalLimit: { limit: 50, windowMs: 1000 },
  userTokenTtlSeconds: 7 * 24 * 3600,
  authorizationCodeTtlSeconds: 600,
  maxWebhooksPerChannel: 15
}

export const SandboxConfig = Context.Reference<SandboxConfigShape>("gateway/SandboxConfig", {
  defaultValue: () => defaultSandboxConfig
})
