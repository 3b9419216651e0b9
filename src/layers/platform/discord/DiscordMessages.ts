/**
 * A direct message from the bot (Discord: POST /users/@me/channels opens or finds the DM channel,
 * then POST /channels/{id}/messages), and publishing an announcement channel's message (POST
 * /channels/{id}/messages/{id}/crosspost), through the REST pipeline like every call: the channel's
 * own bucket, the global budget, 429s waited out within the wait budget (a longer one, as the
 * platform's 10 publications an hour per channel give, is a 503 at once), refusals counted against
 * the invalid-request budget.
 */
import { Effect, Schema } from "effect"
import type { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import type { DiscordRest } from "./DiscordRest.ts"
import { identityOf } from "./DiscordRest.ts"

const Channel = Schema.Struct({ id: Schema.String })
const Message = Schema.Struct({ id: Schema.String })

export const makeDiscordMessages = ({ request }: DiscordRest): Pick<ChatPlatform["Service"], "sendDirectMessage" | "crosspostMessage"> => ({
  sendDirectMessage: (botToken, userId, body) => {
    const auth = { _tag: "Bot", token: botToken } as const
    return request({
      method: "POST",
      path: "/users/@me/channels",
      auth,
      json: { recipient_id: userId },
      target: { identity: identityOf(auth), route: "POST /users/@me/channels", major: "" }
    }, Channel).pipe(
      Effect.flatMap((channel) =>
        request({
          method: "POST",
          path: `/channels/${encodeURIComponent(channel.id)}/messages`,
          auth,
          json: body,
          target: { identity: identityOf(auth), route: "POST /channels/:channel/messages", major: channel.id }
        }, Message)
      ),
      Effect.map((message) => message.id)
    )
  },
  crosspostMessage: (botToken, channelId, messageId) => {
    const auth = { _tag: "Bot", token: botToken } as const
    return request({
      method: "POST",
      path: `/channels/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(messageId)}/crosspost`,
      auth,
      target: { identity: identityOf(auth), route: "POST /channels/:channel/messages/:message/crosspost", major: channelId }
    }, Message).pipe(Effect.asVoid)
  }
})
