/**
 * delivery.md §7: what publishing an event at a sandbox source refuses, in the envelope: 400 (every
 * field), 404 unknown source or video, 409 reused id or not live; publishing is neither counted nor faulted.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SOURCES_LISTING } from "../../src/sandbox/sources/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"
import { Env, publish } from "./SourceEventsFixtures.ts"

layer(Env, { excludeTestServices: true })("sandbox sources serve published events", (it) => {
  it.effect("publish problems come in the envelope: 400 (every field), 404 unknown source or video, 409 reused id or not live", () =>
    Effect.gen(function*() {
      const codes = (body: unknown) => (field(body, "errors") as Array<{ code: string; additionalProperties?: { path?: string } }>)
      const bad = yield* publish("rss", "news", { type: "live", nsfw: "yes", published_at: "yesterday", url: "ftp://x" })
      assert.strictEqual(bad.status, 400)
      assert.sameMembers(codes(bad.body).map((e) => e.additionalProperties?.path), ["type", "nsfw", "published_at", "url"])
      assert.strictEqual(codes(bad.body)[0]!.code, "Bad Request")
      assert.strictEqual((yield* publish("rss", "news", {})).status, 400, "type is required")
      assert.strictEqual((yield* call("/sandbox/sources/rss/news/events", { method: "POST", body: "not json" })).status, 400)
      assert.strictEqual((yield* publish("forum", "NoSuchForum", { type: "post" })).status, 404)
      assert.strictEqual((yield* publish("nosuchmodule", "x", { type: "post" })).status, 404)
      const noId = yield* publish("video", SOURCES_LISTING.video[0]!, { type: "updated", title: "x" })
      assert.strictEqual(noId.status, 400)
      assert.strictEqual(codes(noId.body)[0]!.additionalProperties?.path, "id")
      assert.strictEqual((yield* publish("video", SOURCES_LISTING.video[0]!, { type: "updated", id: "nonexistent", title: "x" })).status, 404)
      assert.strictEqual((yield* publish("rss", "news", { type: "post", id: "sandbox-rss-1" })).status, 409)
      const notLive = yield* publish("streaming", "speedrunsam", { type: "offline" })
      assert.strictEqual(notLive.status, 409)
      assert.strictEqual(codes(notLive.body)[0]!.code, "Conflict")
      const game = yield* publish("streaming", "speedrunsam", { type: "live", game: "Not A Game" })
      assert.strictEqual(game.status, 400)
      assert.strictEqual(codes(game.body)[0]!.additionalProperties?.path, "game")
      // Publishing is a control route: neither counted nor faulted.
      const stats = yield* call("/sandbox/stats")
      assert.isUndefined((field(stats.body, "calls") as Record<string, number>)["POST /sandbox/sources/{module}/{identifier}/events"])
    }))
})
