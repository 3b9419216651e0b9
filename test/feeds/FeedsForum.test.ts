/**
 * Whether a feed's webhook posts in a forum (FeedsForum.ts), against a scripted platform: the rule
 * (`forumOf`: forum and media channels give their tags, others null) and the read — a channel the
 * server's listing shows as text or news is no forum and costs no call; any other is read now; a
 * channel the bot may not see falls back on the listing; an outage is a 503 (408), never a guess.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { FeedsForum, forumOf } from "../../src/services/feeds/FeedsForum.ts"
import type { PlatformChannel, PlatformError } from "../../src/services/platform/ChatPlatform.ts"
import { ChatPlatform, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { stubService } from "../layers/Stub.ts"

const TAGS = [{ id: "350000000000000101", name: "News" }, { id: "350000000000000102", name: "Release" }]

describe("forumOf: the forum a channel is", () => {
  const table: ReadonlyArray<readonly [string, Pick<PlatformChannel, "type" | "available_tags">, ReturnType<typeof forumOf>]> = [
    ["a forum: its tags", { type: 15, available_tags: TAGS }, TAGS],
    ["a media channel is a forum too", { type: 16, available_tags: [TAGS[0]!] }, [TAGS[0]!]],
    ["a forum without tags: []", { type: 15 }, []],
    ["a text channel: null", { type: 0 }, null],
    ["a news channel: null", { type: 5 }, null],
    ["a thread (of a forum or not): null", { type: 11, available_tags: TAGS }, null]
  ]
  for (const [name, channel, expected] of table) it(name, () => assert.deepStrictEqual(forumOf(channel), expected))

  it("keeps only each tag's id and name", () =>
    assert.deepStrictEqual(
      forumOf({ type: 15, available_tags: [{ id: "1", name: "A", moderated: true, emoji_name: "x" } as { id: string; name: string }] }),
      [{ id: "1", name: "A" }]
    ))
})

/** FeedsForum over a platform whose GET /channels/{id} answers `answer`; the ids it was asked for. */
const reader = (answer: Effect.Effect<PlatformChannel, PlatformError>) => {
  const asked: Array<string> = []
  const platform = stubService(ChatPlatform, {
    authorizeUrl: () => "",
    getChannel: (_token, channelId) => Effect.suspend(() => (asked.push(channelId), answer))
  })
  return { asked, read: Effect.provide(FeedsForum.make, Layer.succeed(ChatPlatform, platform)) }
}

const access = (channels: ReadonlyArray<PlatformChannel>) => ({ botToken: Redacted.make("bot"), channels })
const forum = { id: "310000000000000111", name: "news-forum", type: 15, available_tags: TAGS }

describe("FeedsForum.read", () => {
  it.effect("a text or news channel of the listing: null, and the platform is not asked", () =>
    Effect.gen(function*() {
      const r = reader(Effect.die("not asked"))
      const { read } = yield* r.read
      for (const type of [0, 5]) assert.isNull(yield* read(access([{ id: "1", name: "c", type }]), "1"))
      assert.deepStrictEqual(r.asked, [])
    }))

  it.effect("a channel the listing leaves out or lists as a forum: read now, its tags as the platform says", () =>
    Effect.gen(function*() {
      const r = reader(Effect.succeed(forum))
      const { read } = yield* r.read
      assert.deepStrictEqual(yield* read(access([]), forum.id), TAGS)
      // The listing's tags may be stale (it is cached): the channel's own answer wins.
      assert.deepStrictEqual(yield* read(access([{ ...forum, available_tags: [] }]), forum.id), TAGS)
      assert.deepStrictEqual(r.asked, [forum.id, forum.id])
      const text = reader(Effect.succeed({ id: "2", name: "t", type: 0 }))
      assert.isNull(yield* (yield* text.read).read(access([]), "2"))
    }))

  it.effect("a channel the bot may not see (403, 404): the listing's word, else no forum", () =>
    Effect.gen(function*() {
      for (const status of [403, 404]) {
        const { read } = yield* reader(Effect.fail(new PlatformRejected({ status, message: "no" }))).read
        assert.isNull(yield* read(access([]), forum.id))
        assert.deepStrictEqual(yield* read(access([{ ...forum, available_tags: [TAGS[1]!] }]), forum.id), [TAGS[1]!])
      }
    }))

  it.effect("an outage or a refused bot token: 503 (408 for a time-out), never a guess", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [PlatformError, string, number | undefined]> = [
        [new PlatformRejected({ status: 401, message: "401: Unauthorized" }), "ServiceUnavailable", 60],
        [new PlatformRejected({ status: 400, message: "bad" }), "ServiceUnavailable", 10],
        [ServiceUnavailable.of("down", 5), "ServiceUnavailable", 5],
        [RequestTimeout.of("slow"), "RequestTimeout", undefined]
      ]
      for (const [error, tag, retry] of cases) {
        const { read } = yield* reader(Effect.fail(error)).read
        const e = yield* Effect.flip(read(access([]), forum.id))
        assert.strictEqual(e._tag, tag)
        if (e._tag === "ServiceUnavailable") assert.strictEqual(e.problems[0]?.additionalProperties?.["retry_after"], retry)
      }
    }))
})
