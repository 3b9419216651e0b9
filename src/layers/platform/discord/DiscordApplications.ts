/**
 * What the forms runtime calls (forms-runtime.md §1, §4): the bot's application (GET
 * /applications/@me), its commands (PUT /applications/{id}/commands, a bulk overwrite), and
 * messages in channels (POST, PATCH and DELETE /channels/{id}/messages), through the REST pipeline like
 * every call. Writes are sent once per call (DiscordRest retries only GETs).
 */
import { Effect, Schema } from "effect"
import type { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import type { DiscordRest } from "./DiscordRest.ts"
import { identityOf } from "./DiscordRest.ts"

const Application = Schema.Struct({ id: Schema.String, verify_key: Schema.String })
const Message = Schema.Struct({ id: Schema.String })
const Anything = Schema.Unknown

type Methods = "getApplication" | "putCommands" | "createMessage" | "editMessage" | "deleteMessage"

export const makeDiscordApplications = ({ request }: DiscordRest): Pick<ChatPlatform["Service"], Methods> => {
  const bot = (token: Parameters<ChatPlatform["Service"]["getApplication"]>[0]) => ({ _tag: "Bot", token } as const)
  return {
    getApplication: (token) =>
      request({
        method: "GET",
        path: "/applications/@me",
        auth: bot(token),
        target: { identity: identityOf(bot(token)), route: "GET /applications/@me", major: "" }
      }, Application),
    putCommands: (token, applicationId, commands) =>
      request({
        method: "PUT",
        path: `/applications/${encodeURIComponent(applicationId)}/commands`,
        auth: bot(token),
        json: commands,
        target: { identity: identityOf(bot(token)), route: "PUT /applications/:application/commands", major: applicationId }
      }, Anything).pipe(Effect.asVoid),
    createMessage: (token, channelId, { files, ...body }) =>
      request({
        method: "POST",
        path: `/channels/${encodeURIComponent(channelId)}/messages`,
        auth: bot(token),
        json: body,
        files,
        // Review messages, summaries and a form's start message: their order in the channel does not
        // matter, so a burst of them goes together within the channel's bucket.
        target: { identity: identityOf(bot(token)), route: "POST /channels/:channel/messages", major: channelId, unordered: true }
      }, Message).pipe(Effect.map((m) => m.id)),
    editMessage: (token, channelId, messageId, body) =>
      request({
        method: "PATCH",
        path: `/channels/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(messageId)}`,
        auth: bot(token),
        json: body,
        target: { identity: identityOf(bot(token)), route: "PATCH /channels/:channel/messages/:message", major: channelId }
      }, Anything).pipe(Effect.asVoid),
    deleteMessage: (token, channelId, messageId) =>
      request({
        method: "DELETE",
        path: `/channels/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(messageId)}`,
        auth: bot(token),
        target: { identity: identityOf(bot(token)), route: "DELETE /channels/:channel/messages/:message", major: channelId }
      }, Anything).pipe(Effect.asVoid)
  }
}
