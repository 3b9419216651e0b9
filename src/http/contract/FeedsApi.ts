/** The six feed-connector modules of the contract: one HttpApi group per module (part of http/contract/Api.ts). */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, TooManyRequests } from "../../domain/infra/Errors.ts"
import { FeedModules, GameLookup, UserLookup } from "../../domain/feeds/Feed.ts"
import { DeliveryLogPage, DeliveryLogQuery, FeedPreview, TestMessageResult } from "../../domain/insight/FeedInsight.ts"
import { FeedStatus } from "../../domain/feeds/FeedStatus.ts"
import { FeedId } from "../../domain/infra/Ids.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { text } from "../../domain/infra/Text.ts"
import { Success } from "../../domain/auth/Token.ts"
import { moduleErrors, serverParams } from "./ApiParams.ts"
import { bodyExample, feedExamples, webhookOptionsExample } from "./Examples.ts"
import { Authorization, Idempotency } from "./Middleware.ts"

// ---------------------------------------------------------------------------------------------
// Feed connectors: one group per module
// ---------------------------------------------------------------------------------------------

const userIdLookup = (m: "photo" | "streaming" | "microblog" | "video") =>
  HttpApiEndpoint.get("getUserId", "/getUserId/:userName", {
    params: { ...serverParams, userName: text(1, 200) },
    success: UserLookup,
    error: moduleErrors
  }).annotate(OpenApi.Summary, `Look up the external id of a ${m} ${m === "video" ? "channel" : "user"}`)

const gameIdLookup = HttpApiEndpoint.get("getGameId", "/getGameId/:gameName", {
  params: { ...serverParams, gameName: text(1, 200) },
  success: GameLookup,
  error: moduleErrors
}).annotate(OpenApi.Summary, "Look up the id of a game by name")

/** delivery.md §8: why items are (not) posted, a test message, a poll now, the delivery log. None changes the feed. */
const insightEndpoints = (m: FeedModuleName, feedParams: typeof serverParams & { readonly feedId: typeof FeedId }) =>
  [
    HttpApiEndpoint.get("preview", "/feeds/:feedId/preview", { params: feedParams, success: FeedPreview, error: moduleErrors })
      .annotateMerge(OpenApi.annotations({
        summary: `Preview a ${m} feed: what it would post now, and why`,
        description:
          "The source's newest items (at most 10), fetched now, newest first, each judged by the worker's own rules: `verdict` post or skip, `reasons` every rule that decided, `message` exactly what the webhook would get. Nothing is posted or stored."
      })),
    HttpApiEndpoint.post("test", "/feeds/:feedId/test", {
      params: feedParams,
      success: TestMessageResult,
      error: [BadRequest.wire, TooManyRequests.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: `Send a test message of a ${m} feed`,
      description:
        "Posts the source's newest item now, rendered as usual, ignoring filters and what was posted before. At most one per feed per 10 s (429 with `Retry-After`). Audited (`PUSH`). 400 when the source has no item or the webhook refuses."
    })).middleware(Idempotency),
    HttpApiEndpoint.post("refresh", "/feeds/:feedId/refresh", {
      params: feedParams,
      success: Success,
      error: [TooManyRequests.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: `Poll the source of a ${m} feed now`,
      description: "Polls the feed's source now instead of at its slot. At most once per source per 60 s (429 with `Retry-After`)."
    })).middleware(Idempotency),
    HttpApiEndpoint.get("deliveries", "/feeds/:feedId/deliveries", {
      params: feedParams,
      query: DeliveryLogQuery,
      success: DeliveryLogPage,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: `The delivery log of a ${m} feed`,
      description:
        "Every item sent, failed or skipped, with its reason and message id, newest first, kept 30 days. `page_size` 1–100 (default 10), `page` ≥ 1 (default 1); a page above `page_max` is empty."
    }))
  ] as const

const feedEndpoints = <M extends FeedModuleName>(m: M) => {
  const s = FeedModules[m]
  const feedParams = { ...serverParams, feedId: FeedId }
  return [
    HttpApiEndpoint.get("list", "/feeds", { params: serverParams, success: s.feeds, error: moduleErrors })
      .annotate(OpenApi.Summary, `The ${m} feeds of a server`),
    // create and update: their handlers read the body after the access check and judge it by this
    // payload schema themselves (handlers/Feeds.ts, RawBody.ts); declared for OpenAPI and the client.
    HttpApiEndpoint.post("create", "/feeds", {
      params: serverParams,
      payload: s.create,
      success: s.feed,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, `Create a ${m} feed bound to a chat webhook`).annotate(
      OpenApi.Transform,
      bodyExample({ feed_identifier: feedExamples[m], webhook_channel: "1100000000000000001", webhook_options: webhookOptionsExample })
    ).middleware(Idempotency),
    HttpApiEndpoint.patch("update", "/feeds/:feedId", {
      params: feedParams,
      payload: s.update,
      success: s.feed,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, `Replace the webhook_options of a ${m} feed`)
      .annotate(OpenApi.Transform, bodyExample({ webhook_options: webhookOptionsExample })).middleware(Idempotency),
    HttpApiEndpoint.delete("delete", "/feeds/:feedId", { params: feedParams, success: Success, error: moduleErrors })
      .annotate(OpenApi.Summary, `Delete a ${m} feed`).middleware(Idempotency),
    HttpApiEndpoint.get("status", "/feeds/:feedId/status", { params: feedParams, success: FeedStatus, error: moduleErrors })
      .annotateMerge(OpenApi.annotations({
        summary: `The delivery status of a ${m} feed`,
        description:
          "`state` active, failing or disabled (with `reason`); the last and next poll of its source; the last message posted; items posted and skipped since creation. A feed never polled is active with nulls and zeros."
      })),
    ...insightEndpoints(m, feedParams)
  ] as const
}

const feedDescription = (m: FeedModuleName) =>
  `The ${m} feeds module: feeds that post new ${m} items to a chat webhook, with their delivery status.`

// Each module's routes under `{modules}/<m>`; a feed body may not carry unknown keys (also where a
// handler decodes it itself: RawBody.ts reads these options).
const feedParse = { errors: "all", onExcessProperty: "error" } as const

export class PhotoGroup extends HttpApiGroup.make("photo")
  .add(...feedEndpoints("photo"), userIdLookup("photo"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/photo")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("photo"))
{}
export class ForumGroup extends HttpApiGroup.make("forum")
  .add(...feedEndpoints("forum"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/forum")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("forum"))
{}
export class RssGroup extends HttpApiGroup.make("rss")
  .add(...feedEndpoints("rss"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/rss")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("rss"))
{}
export class StreamingGroup extends HttpApiGroup.make("streaming")
  .add(...feedEndpoints("streaming"), userIdLookup("streaming"), gameIdLookup)
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/streaming")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("streaming"))
{}
export class MicroblogGroup extends HttpApiGroup.make("microblog")
  .add(...feedEndpoints("microblog"), userIdLookup("microblog"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/microblog")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("microblog"))
{}
export class VideoGroup extends HttpApiGroup.make("video")
  .add(...feedEndpoints("video"), userIdLookup("video"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/video")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
  .annotate(OpenApi.Description, feedDescription("video"))
{}

