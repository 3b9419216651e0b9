/** Examples of the main request bodies, for the OpenAPI document and the docs page (Redocly checks them). */
import { OpenApi } from "effect/http-api"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"

/** An example of an endpoint's JSON body in the OpenAPI document. */
export const bodyExample = (example: unknown) =>
  OpenApi.Transform.of((op) => {
    const media = op.requestBody?.content?.["application/json"]
    if (media !== undefined) media.example = example
    return op
  })
export const formExample = {
  title: "Bug report",
  channel_id: "1100000000000000001",
  workflow_live: true,
  color_hex: "#5865f2",
  steps: [
    { type: "message", string: "What happened?", alias: "Summary" },
    { type: "message", string: "Which version?", answers_validation: ["stable", "beta"] }
  ]
}
export const feedExamples: Record<FeedModuleName, string> = {
  photo: "natgeo",
  forum: "typescript",
  rss: "https://blog.example.org/feed.xml",
  streaming: "speedrunner42",
  microblog: "effect_ts",
  video: "UC_x5XG1OV2P6uZZ5FSM9Ttw"
}
export const webhookOptionsExample = { custom_header: "New post", "webhook-name": "Feeds", "no-avatar-overwrite": false }
