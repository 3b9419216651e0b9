/**
 * A forum post's first message (delivery.md §10), sent as every message is, with one allowance: its
 * `applied_tags` are the forum's tags as last read (FeedsForum.ts: at the feed's create, PATCH and
 * test message), and a tag deleted in the forum since then makes the platform refuse the whole post
 * (400 Invalid Form Body, 50035). It is then sent once more without `applied_tags`: the item is
 * posted untagged rather than lost, and a warning says how to bring the tags up to date. Nothing was
 * posted by the refused request, so this never posts twice.
 */
import { Effect } from "effect"
import type { ChatPlatform, PlatformError, PlatformWebhookBody } from "../platform/ChatPlatform.ts"

type Execute = ChatPlatform["Service"]["executeWebhook"]

/** Whether `e` is the platform refusing the form of a forum post that carries tags. */
export const refusedTags = (body: PlatformWebhookBody, e: PlatformError): boolean =>
  e._tag === "PlatformRejected" && e.status === 400 && e.code === 50035 &&
  body.thread_name !== undefined && body.applied_tags !== undefined && body.applied_tags.length > 0

/** `execute` of the platform, with the untagged second try above. */
export const executeFirst = (execute: Execute): Execute => (webhookId, token, body, options) =>
  execute(webhookId, token, body, options).pipe(
    Effect.catchIf((e) => refusedTags(body, e), () => {
      const { applied_tags: _, ...untagged } = body
      return Effect.andThen(
        Effect.logWarning("a forum post was refused with its tags (one was deleted from the forum?): posted without them; edit the feed or send its test message to read the forum's tags again").pipe(
          Effect.annotateLogs({ webhook: webhookId, tags: (body.applied_tags ?? []).join(",") })
        ),
        execute(webhookId, token, untagged, options)
      )
    })
  )
