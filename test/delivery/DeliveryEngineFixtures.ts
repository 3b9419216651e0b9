/**
 * What DeliverySteps.test.ts and DeliveryWorkers.test.ts share: rss items of scripted sources, new
 * source URLs, the body a webhook receives for an item, and a feed baselined on a new source.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { render } from "../../src/services/delivery/render/Render.ts"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { insertFeed, newWebhook } from "./DeliveryFixtures.ts"
import type { Script } from "./DeliveryFixtures.ts"
import { rss } from "./ItemFixtures.ts"

export const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
/** An rss item of source `src`, published `age` minutes ago. */
export const item = (src: string, id: string, age: number, title = `Item ${id}`) =>
  rss({
    id,
    title,
    url: `https://news.test/${src}/${id}`,
    publishedAt: minutesAgo(age),
    eventAt: minutesAgo(age),
    feedUrl: `https://news.test/${src}.xml`
  })
let sources = 0
export const newSource = () => `https://news.test/src-${sources++}-${randomBytes(3).toString("hex")}.xml`

export const bodyOf = (i: ReturnType<typeof item>, options = {}) => JSON.parse(JSON.stringify(render(i, options, { name: null })))

/** Baselines a new feed on a new source: its first poll stores what is served (by `script`). */
export const baselinedWith = (script: Script) => (initial: ReadonlyArray<ReturnType<typeof item>>, options = {}) =>
  Effect.gen(function*() {
    const webhook = yield* newWebhook
    const identifier = newSource()
    const feedId = yield* insertFeed({ identifier, webhook, options })
    const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
    script.serve(identifier, initial)
    const first = yield* DeliveryEngine.use((d) => d.pollSource(sourceId))
    assert.strictEqual(first._tag, "Baseline")
    return { webhook, identifier, feedId, sourceId }
  })
