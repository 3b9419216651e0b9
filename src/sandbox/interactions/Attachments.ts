/**
 * The files attached to the bots' messages, at the `url` of their attachment objects, as Discord's
 * CDN serves them (`https://cdn.discordapp.com/attachments/{channel_id}/{attachment_id}/{filename}`):
 * `GET /sandbox/discord/attachments/{channel_id}/{attachment_id}/{filename}` answers the uploaded
 * bytes with the attachment's content type. A file that no message of that channel carries, or
 * carries no more (deleted, or edited away), is a 404. Like the inboxes: never counted nor faulted.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import type { DiscordStore } from "../DiscordState.ts"
import { attachmentsOf, contentTypeOf } from "./MessageShapes.ts"
import { interactionsOf } from "./State.ts"

const decoded = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** The attachment `id` named `filename` on a live message of `channelId`, as the message is now. */
const carried = (store: DiscordStore, channelId: string, id: string, filename: string): boolean =>
  [...interactionsOf(store).messages.values()].some((m) =>
    m.channelId === channelId && !m.deleted && attachmentsOf(m.versions.at(-1)!.body).some((a) => a.id === id && a.filename === filename)
  )

export const AttachmentRoutes = (store: DiscordStore) =>
  HttpRouter.use((router) =>
    router.add("GET", "/sandbox/discord/attachments/:channel_id/:attachment_id/:filename", () =>
      Effect.gen(function*() {
        const params = yield* HttpRouter.params
        const id = params["attachment_id"] ?? ""
        const filename = decoded(params["filename"] ?? "")
        const bytes = interactionsOf(store).files.get(id)
        if (bytes === undefined || !carried(store, params["channel_id"] ?? "", id, filename)) {
          return HttpServerResponse.text("This content is no longer available.", { status: 404 })
        }
        return HttpServerResponse.uint8Array(bytes, { contentType: contentTypeOf(filename), headers: { "cache-control": "no-store" } })
      }))
  )
