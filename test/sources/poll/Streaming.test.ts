/**
 * The streaming connector: the live/offline table against the cursor (pure), then over HTTP against
 * a fake Helix: 100 channels a call, names and profile images for new streams only, the game the
 * stream started with on both events, and the offline grace under the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { type StreamingCursor, transition } from "../../../src/layers/sources/poll/StreamingPoller.ts"
import type { StreamingItem } from "../../../src/services/delivery/render/Item.ts"
import { emptyPollState, PollFailed, type PollResult, type PollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { json, withPoller, pollServerForFile } from "./PollServerFixtures.ts"

const GRACE = 300_000
const T0 = Date.parse("2024-06-01T12:00:00Z")
const live = (streamId: string, startedAt: number, game = "Minecraft") => ({
  streamId, startedAt: new Date(startedAt).toISOString(), gameId: game === "Minecraft" ? "27471" : "509658", game, title: "Building",
  login: "sandboxstreamer", displayName: "SandboxStreamer", profileImage: "https://static-cdn.example.com/p.png"
})
const events = (items: ReadonlyArray<StreamingItem>) => items.map((i) => `${i.event} ${i.id} ${i.game} ${i.eventAt.toISOString()}`)

describe("transition (pure)", () => {
  const onAir: StreamingCursor = { live: live("s1", T0), offlineSince: null }
  const dropped: StreamingCursor = { live: live("s1", T0), offlineSince: T0 + 3_600_000 }
  const cases: ReadonlyArray<{
    readonly name: string
    readonly cursor: StreamingCursor | null
    readonly now: ReturnType<typeof live> | undefined
    readonly at: number
    readonly events: ReadonlyArray<string>
    readonly next: StreamingCursor
  }> = [
    { name: "first poll, offline: nothing", cursor: null, now: undefined, at: T0, events: [], next: { live: null, offlineSince: null } },
    { name: "a stream starts: live", cursor: { live: null, offlineSince: null }, now: live("s1", T0), at: T0 + 60_000, events: ["live s1 Minecraft 2024-06-01T12:00:00.000Z"], next: onAir },
    { name: "still live, the game changed: nothing, the starting game kept", cursor: onAir, now: live("s1", T0, "Just Chatting"), at: T0 + 120_000, events: [], next: onAir },
    { name: "first seen offline: noted, nothing posted", cursor: onAir, now: undefined, at: T0 + 3_600_000, events: [], next: dropped },
    { name: "offline inside the grace: nothing", cursor: dropped, now: undefined, at: T0 + 3_600_000 + GRACE - 1, events: [], next: dropped },
    {
      name: "offline for the whole grace: offline, with the starting game and the time it was first seen offline",
      cursor: dropped, now: undefined, at: T0 + 3_600_000 + GRACE,
      events: ["offline s1:offline Minecraft 2024-06-01T13:00:00.000Z"], next: { live: null, offlineSince: null }
    },
    { name: "back inside the grace with the same stream: nothing", cursor: dropped, now: live("s1", T0), at: T0 + 3_660_000, events: [], next: onAir },
    {
      name: "back inside the grace with a new stream id: the same stream, nothing",
      cursor: dropped, now: live("s2", T0 + 3_600_000 + 120_000, "Just Chatting"), at: T0 + 3_600_000 + GRACE + 60_000, events: [], next: onAir
    },
    {
      name: "a new stream started after the grace: offline of the old one, then live",
      cursor: dropped, now: live("s2", T0 + 3_600_000 + GRACE + 10_000, "Just Chatting"), at: T0 + 3_600_000 + GRACE + 60_000,
      events: ["offline s1:offline Minecraft 2024-06-01T13:00:00.000Z", "live s2 Just Chatting 2024-06-01T13:05:10.000Z"],
      next: { live: live("s2", T0 + 3_600_000 + GRACE + 10_000, "Just Chatting"), offlineSince: null }
    }
  ]
  it.each(cases)("$name", (c) => {
    const result = transition(c.cursor, c.now, c.at, GRACE)
    assert.deepStrictEqual(events(result.items), c.events)
    assert.deepStrictEqual(result.cursor, c.next)
  })

  it("the items carry the channel, names, title and image of the stream's start", () => {
    const [item] = transition(null, live("s1", T0), T0, GRACE).items
    assert.deepStrictEqual(item, {
      module: "streaming", id: "s1", url: "https://www.twitch.tv/sandboxstreamer", publishedAt: new Date(T0), eventAt: new Date(T0),
      event: "live", displayName: "SandboxStreamer", username: "sandboxstreamer", game: "Minecraft", gameId: "27471", status: "Building",
      channelUrl: "https://www.twitch.tv/sandboxstreamer", profileImage: "https://static-cdn.example.com/p.png"
    })
  })
})

const server = pollServerForFile()

describe("streaming over HTTP (Helix)", () => {
  const options = () => ({
    streaming: { clientId: "twitch-cid", clientSecret: Redacted.make("twitch-secret"), apiUrl: server.url, authUrl: server.url },
    offlineGraceSeconds: 300
  })
  const helixStream = (userId: string, streamId: string, game: { id: string; name: string }, startedAt: string) => ({
    id: streamId, user_id: userId, user_login: `user${userId}`, user_name: `User${userId}`, game_id: game.id, game_name: game.name,
    type: "live", title: `Stream of ${userId}`, viewer_count: 5, started_at: startedAt
  })
  /** Helix with `online` (user id → stream) answering only the ids asked for. */
  const helix = (online: () => ReadonlyMap<string, ReturnType<typeof helixStream>>) => {
    server.routes.set("/oauth2/token", json({ access_token: "app-token", expires_in: 5_000_000, token_type: "bearer" }))
    server.routes.set("/helix/streams", (req, res) => {
      const ids = new URL(req.url!, "http://x").searchParams.getAll("user_id")
      json({ data: ids.flatMap((id) => online().get(id) ?? []), pagination: {} })(req, res, "")
    })
    server.routes.set("/helix/users", (req, res) => {
      const ids = new URL(req.url!, "http://x").searchParams.getAll("id")
      json({ data: ids.map((id) => ({ id, login: `user${id}`, display_name: `User${id}`, profile_image_url: `https://cdn.example.com/${id}.png` })) })(req, res, "")
    })
  }
  const result = (m: ReadonlyMap<string, PollResult | PollFailed>, id: string): PollResult => {
    const r = m.get(id)
    if (r === undefined || r instanceof PollFailed) throw new Error(`no result for ${id}: ${String(r)}`)
    return r
  }

  it.live("150 channels → two Helix calls of at most 100; profile images fetched for the new streams only", () =>
    withPoller(options(), Effect.gen(function*() {
      const ids = Array.from({ length: 150 }, (_, i) => String(1000 + i))
      const online = new Map([
        ["1003", helixStream("1003", "900", { id: "27471", name: "Minecraft" }, "2024-06-01T12:00:00Z")],
        ["1120", helixStream("1120", "901", { id: "509658", name: "Just Chatting" }, "2024-06-01T12:30:00Z")]
      ])
      helix(() => online)
      const sources = ids.map((identifier) => ({ identifier, previous: emptyPollState }))
      const first = yield* SourcePoller.use((p) => p.pollMany("streaming", sources))
      assert.strictEqual(first.size, 150)
      const calls = server.hits("/helix/streams")
      assert.deepStrictEqual(calls.map((c) => c.query.getAll("user_id").length).sort((a, b) => a - b), [50, 100])
      assert.strictEqual(calls[0]!.headers["client-id"], "twitch-cid")
      assert.strictEqual(calls[0]!.headers["authorization"], "Bearer app-token")
      assert.deepStrictEqual(server.hits("/helix/users").flatMap((c) => c.query.getAll("id")).sort(), ["1003", "1120"])
      const liveItems = ids.flatMap((id) => {
        const r = result(first, id)
        return r._tag === "Items" ? r.items : []
      })
      assert.deepStrictEqual(liveItems.map((i) => [i.id, i.module === "streaming" && i.game, i.module === "streaming" && i.profileImage]), [
        ["900", "Minecraft", "https://cdn.example.com/1003.png"],
        ["901", "Just Chatting", "https://cdn.example.com/1120.png"]
      ])
      // A first poll is never NotModified (it is the baseline); the next one with nothing new is.
      assert.deepStrictEqual(result(first, "1000"), { _tag: "Items", items: [], state: { ...emptyPollState, cursor: { live: null, offlineSince: null } } })
      const usersCalls = server.hits("/helix/users").length
      const second = yield* SourcePoller.use((p) => p.pollMany("streaming", ids.map((identifier) => ({ identifier, previous: result(first, identifier).state }))))
      assert.deepStrictEqual([result(second, "1000")._tag, result(second, "1003")._tag], ["NotModified", "NotModified"])
      assert.strictEqual(server.hits("/helix/users").length, usersCalls)
    })))

  it.effect("live → offline only after the grace; a flap back inside the grace posts nothing; the starting game on both", () =>
    withPoller(options(), Effect.gen(function*() {
      let current: ReturnType<typeof helixStream> | undefined = helixStream("42", "s1", { id: "27471", name: "Minecraft" }, "2024-06-01T12:00:00Z")
      helix(() => new Map(current === undefined ? [] : [["42", current]]))
      let state: PollState = emptyPollState
      const step = (minutes: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(T0 + minutes * 60_000)
          const r = yield* SourcePoller.use((p) => p.poll("streaming", "42", state))
          state = r.state
          return r._tag === "Items" ? events(r.items as ReadonlyArray<StreamingItem>) : []
        })
      assert.deepStrictEqual(yield* step(1), ["live s1 Minecraft 2024-06-01T12:00:00.000Z"])
      current = helixStream("42", "s1", { id: "509658", name: "Just Chatting" }, "2024-06-01T12:00:00Z")
      assert.deepStrictEqual(yield* step(10), [])
      current = undefined
      assert.deepStrictEqual(yield* step(20), [])
      assert.deepStrictEqual(yield* step(23), [])
      // Back after 4 minutes with a new stream id: the same stream.
      current = helixStream("42", "s2", { id: "509658", name: "Just Chatting" }, "2024-06-01T12:24:00Z")
      assert.deepStrictEqual(yield* step(25), [])
      current = undefined
      assert.deepStrictEqual(yield* step(30), [])
      assert.deepStrictEqual(yield* step(34), [])
      assert.deepStrictEqual(yield* step(35), ["offline s1:offline Minecraft 2024-06-01T12:30:00.000Z"])
      assert.deepStrictEqual(yield* step(40), [])
    })))

  it.live("a Helix failure fails every channel of its batch; a malformed id is `gone`", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/oauth2/token", json({ access_token: "app-token", expires_in: 3600 }))
      server.routes.set("/helix/streams", json({ error: "Service Unavailable" }, 503, { "retry-after": "30" }))
      const r = yield* SourcePoller.use((p) => p.pollMany("streaming", [{ identifier: "1", previous: emptyPollState }, { identifier: "x y", previous: emptyPollState }]))
      const one = r.get("1") as PollFailed
      assert.deepStrictEqual([one.kind, one.status, one.retryAfterSeconds], ["http", 503, 30])
      assert.strictEqual((r.get("x y") as PollFailed).kind, "gone")
    })))
})
