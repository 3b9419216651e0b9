/**
 * A SourcePoller in memory: each source `(module, identifier)` serves the items put there (`serve`,
 * `publish`) or a scripted PollFailed; a source never put there is gone (404), as the twins answer.
 * An answer's state carries a hash of the ids served, so the same ids again are NotModified (the
 * live poller's body hash). `SourcesControl` is the test's hand on the sources, and counts polls.
 * Held to the live poller's suite: test/contracts/SourcePoller.contract.ts.
 */
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { PollResult, PollState } from "../../src/services/sources/SourcePoller.ts"
import { PollFailed, SourcePoller } from "../../src/services/sources/SourcePoller.ts"

export class SourcesControl extends Context.Service<SourcesControl, {
  /** What the source serves from now on: these items (newest or oldest first, as a platform would), or a failure. */
  readonly serve: (module: FeedModuleName, identifier: string, answer: ReadonlyArray<Item> | PollFailed) => Effect.Effect<void>
  /** Adds an item in front of what the source serves (creating the source). */
  readonly publish: (module: FeedModuleName, identifier: string, item: Item) => Effect.Effect<void>
  /** Polls of the source so far (`poll` and `pollMany` alike). */
  readonly polls: (module: FeedModuleName, identifier: string) => Effect.Effect<number>
}>()("test/SourcesControl") {}

const key = (module: FeedModuleName, identifier: string) => `${module}\u0000${identifier}`
const hashOf = (items: ReadonlyArray<Item>) => createHash("sha256").update(items.map((i) => i.id).join("\n")).digest("hex")

/** Sources and what they serve at the start. */
export type SourcesSeed = ReadonlyArray<{ readonly module: FeedModuleName; readonly identifier: string; readonly items: ReadonlyArray<Item> }>

export const SourcePollerMemory = (seed: SourcesSeed = []) =>
  Layer.unwrap(Effect.sync(() => {
    const answers = new Map<string, ReadonlyArray<Item> | PollFailed>(seed.map((s) => [key(s.module, s.identifier), s.items]))
    const counts = new Map<string, number>()

    const poll = (module: FeedModuleName, identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
      Effect.suspend(() => {
        const k = key(module, identifier)
        counts.set(k, (counts.get(k) ?? 0) + 1)
        const answer = answers.get(k) ?? new PollFailed({ message: `The ${module} source ${identifier} no longer exists (404).`, kind: "gone", status: 404 })
        if (answer instanceof PollFailed) return Effect.fail(answer)
        const state: PollState = { etag: null, lastModified: null, bodyHash: hashOf(answer), cursor: null }
        return Effect.succeed(
          previous.bodyHash === state.bodyHash ? { _tag: "NotModified", state } as const : { _tag: "Items", items: answer, state } as const
        )
      })

    return Layer.mergeAll(
      Layer.succeed(SourcePoller, SourcePoller.of({
        poll,
        pollMany: (module, sources) =>
          Effect.map(
            Effect.forEach(sources, (s) => Effect.map(Effect.result(poll(module, s.identifier, s.previous)), (r) => [s.identifier, r] as const)),
            (results) => new Map(results.map(([id, r]) => [id, r._tag === "Success" ? r.success : r.failure]))
          )
      })),
      Layer.succeed(SourcesControl, SourcesControl.of({
        serve: (module, identifier, answer) => Effect.sync(() => void answers.set(key(module, identifier), answer)),
        publish: (module, identifier, item) =>
          Effect.sync(() => {
            const current = answers.get(key(module, identifier))
            answers.set(key(module, identifier), [item, ...(Array.isArray(current) ? current : [])])
          }),
        polls: (module, identifier) => Effect.sync(() => counts.get(key(module, identifier)) ?? 0)
      }))
    )
  }))
