/** What the HTTP middleware and handlers need to know of the deployment (provided by src/layers/config/). */
import { Context } from "effect"

export class HttpSettings extends Context.Service<HttpSettings, {
  /** PUBLIC_URL without a trailing slash: the host sign-in cookies are set on. */
  readonly publicUrl: string
  /** TRUST_PROXY: read the client address from the last `X-Forwarded-For` entry. */
  readonly trustProxy: boolean
  /** RATE_LIMIT_API_PER_MINUTE, per signed-in user. */
  readonly rateLimitApiPerMinute: number
  /** RATE_LIMIT_AUTH_PER_HOUR, per token family for a valid gateway token, else per client address. */
  readonly rateLimitAuthPerHour: number
}>()("gateway/HttpSettings") {}
