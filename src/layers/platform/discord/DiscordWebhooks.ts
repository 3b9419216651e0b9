/**
 * Posting through a webhook (POST /webhooks/{id}/{token}), through the REST pipeline like every
 * call: the webhook's own bucket (major parameter: the webhook and a hash of its token), the global
 * budget, 429s waited out, refusals counted against the invalid-request budget. A POST is sent once
 * per call (DiscordRest retries only GETs): whether to try again is the caller's decision.
 */
import { Effect, Redacted, Schema } from "effect"
import type { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import { tokenHash } from "./DiscordRateLimits.ts"
import type { DiscordRest } from "./DiscordRest.ts"

/** The fields of Discord's MessageResponse the gateway reads back; null without `wait` (204). */
const Posted = Schema.NullOr(Schema.Struct({ id: Schema.String }))

export const makeDiscordWebhooks = ({ request }: DiscordRest): Pick<ChatPlatform["Service"], "executeWebhook"> => ({
  executeWebhook: (webhookId, webhookToken, body, options) => {
    const wait = options?.wait ?? true
    const token = Redacted.value(webhookToken)
    const query = new URLSearchParams()
    if (wait) query.set("wait", "true")
    if (options?.threadId !== undefined) query.set("thread_id", options.threadId)
    const search = query.size === 0 ? "" : `?${query.toString()}`
    return request({
      method: "POST",
      path: `/webhooks/${encodeURIComponent(webhookId)}/${encodeURIComponent(token)}${search}`,
      auth: { _tag: "None" },
      json: body,
      target: { identity: "anon", route: "POST /webhooks/:webhook/:token", major: `${webhookId}/${tokenHash(token)}` },
      secretPath: true
    }, Posted).pipe(Effect.map((message) => (wait ? message?.id ?? null : null)))
  }
})
