/**
 * The SourcePoller contract: what delivery relies on from a poll, on every layer (the live poller
 * against the sandbox twins over HTTP, the memory layer). A first poll serves what the source holds
 * (never NotModified); polled again with the state it returned, an unchanged source serves nothing
 * new; a post published at the source is served by the next poll; a source that does not exist
 * fails as `gone`; `pollMany` answers once per source, as `poll` does. Time-outs, size caps, SSRF
 * guards and each platform's request shapes belong to the live poller's own tests (test/sources/poll).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import { itemTitle } from "../../src/services/delivery/render/Item.ts"
import type { PollResult } from "../../src/services/sources/SourcePoller.ts"
import { emptyPollState, PollFailed, SourcePoller } from "../../src/services/sources/SourcePoller.ts"

/** An identifier, given where rss feeds are served (the sandbox's port, or the memory origin). */
export type Identifier = (origin: string) => string

export interface SourcePollerFixture<R> {
  readonly origin: Effect.Effect<string, never, R>
  /** Sources that exist: the ids a first poll serves, in its order; what an unchanged source answers. */
  readonly sources: ReadonlyArray<{
    readonly module: FeedModuleName
    readonly identifier: Identifier
    readonly ids: ReadonlyArray<string>
    readonly unchanged: "NotModified" | "Items"
  }>
  /** Sources that do not exist (unknown, or never created). */
  readonly missing: ReadonlyArray<{ readonly module: FeedModuleName; readonly identifier: Identifier }>
  /** Where a test publishes: an rss feed created by its first post, and an existing forum that serves nothing yet. */
  readonly newFeed: Identifier
  readonly forum: string
  /** Publishes a post at the source; the id and url of the item a poll will serve for it. */
  readonly publish: (
    module: "rss" | "forum",
    identifier: string,
    post: { readonly id: string; readonly title: string }
  ) => Effect.Effect<{ readonly id: string; readonly url: string }, never, R>
}

const itemsOf = (r: PollResult): ReadonlyArray<Item> => {
  assert.strictEqual(r._tag, "Items")
  return r._tag === "Items" ? r.items : []
}
const ids = (r: PollResult) => itemsOf(r).map((i) => i.id)
const failureOf = (r: PollResult | PollFailed) => {
  assert.instanceOf(r, PollFailed)
  return r as PollFailed
}

export const sourcePollerContract = <R, E>(name: string, pollerLayer: Layer.Layer<SourcePoller | R, E>, fixture: SourcePollerFixture<R>) =>
  layer(pollerLayer, { excludeTestServices: true, timeout: "60 seconds" })(`SourcePoller contract (${name})`, (it) => {
    it.effect("a first poll serves what each source holds, never NotModified", () =>
      Effect.gen(function*() {
        const poller = yield* SourcePoller
        const origin = yield* fixture.origin
        for (const source of fixture.sources) {
          const first = yield* poller.poll(source.module, source.identifier(origin), emptyPollState)
          assert.deepStrictEqual(ids(first), source.ids, source.identifier(origin))
          for (const item of itemsOf(first)) assert.strictEqual(item.module, source.module)
        }
      }))

    it.effect("polled again with the state it returned, an unchanged source serves nothing new", () =>
      Effect.gen(function*() {
        const poller = yield* SourcePoller
        const origin = yield* fixture.origin
        for (const source of fixture.sources) {
          const first = yield* poller.poll(source.module, source.identifier(origin), emptyPollState)
          const again = yield* poller.poll(source.module, source.identifier(origin), first.state)
          assert.strictEqual(again._tag, source.unchanged, source.identifier(origin))
          if (again._tag === "Items") for (const id of ids(again)) assert.include(source.ids, id)
        }
      }))

    it.effect("a source that does not exist fails as gone, in words its owner can read", () =>
      Effect.gen(function*() {
        const poller = yield* SourcePoller
        const origin = yield* fixture.origin
        for (const source of fixture.missing) {
          const failed = yield* Effect.flip(poller.poll(source.module, source.identifier(origin), emptyPollState))
          assert.strictEqual(failed.kind, "gone", source.identifier(origin))
          assert.isAbove(failed.message.length, 0)
        }
      }))

    it.effect("a post published at a source is served by the next poll, with its title and url; the older ones stay", () =>
      Effect.gen(function*() {
        const poller = yield* SourcePoller
        const feed = fixture.newFeed(yield* fixture.origin)
        const first = yield* fixture.publish("rss", feed, { id: "contract-1", title: "First & <one>" })
        const initial = yield* poller.poll("rss", feed, emptyPollState)
        assert.deepStrictEqual(ids(initial), [first.id])
        const second = yield* fixture.publish("rss", feed, { id: "contract-2", title: "Second ✓" })
        const next = yield* poller.poll("rss", feed, initial.state)
        assert.sameMembers(ids(next), [first.id, second.id])
        const served = itemsOf(next).find((i) => i.id === second.id)!
        assert.deepStrictEqual([served.module, itemTitle(served), served.url], ["rss", "Second ✓", second.url])

        const before = yield* poller.poll("forum", fixture.forum, emptyPollState)
        const post = yield* fixture.publish("forum", fixture.forum, { id: "contract9", title: "Patch notes & more" })
        const after = yield* poller.poll("forum", fixture.forum, before.state)
        const item = itemsOf(after).find((i) => i.id === post.id)
        assert.isDefined(item, `${post.id} in ${JSON.stringify(ids(after))}`)
        assert.deepStrictEqual([item!.module, itemTitle(item!), item!.url], ["forum", "Patch notes & more", post.url])
      }))

    it.effect("pollMany answers once per source, as poll does: items, or the failure", () =>
      Effect.gen(function*() {
        const poller = yield* SourcePoller
        const origin = yield* fixture.origin
        const modules = [...new Set(fixture.sources.map((s) => s.module))]
        for (const module of modules) {
          const existing = fixture.sources.filter((s) => s.module === module)
          const missing = fixture.missing.filter((s) => s.module === module)
          const answers = yield* poller.pollMany(module, [...existing, ...missing].map((s) => ({ identifier: s.identifier(origin), previous: emptyPollState })))
          assert.sameMembers([...answers.keys()], [...existing, ...missing].map((s) => s.identifier(origin)))
          for (const s of existing) {
            const answer = answers.get(s.identifier(origin))!
            assert.notInstanceOf(answer, PollFailed, s.identifier(origin))
            assert.deepStrictEqual(ids(answer as PollResult), s.ids)
          }
          for (const s of missing) assert.strictEqual(failureOf(answers.get(s.identifier(origin))!).kind, "gone")
        }
      }))
  })
