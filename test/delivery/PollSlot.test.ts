/**
 * A poll job carries its slot, and the source remembers the last slot a poll recorded: pg-boss
 * delivers a job again when the worker that ran it died before marking it done (SIGKILL, heartbeat
 * lost), and that second run must not ask the source again for the same slot. What the source sees
 * is counted (the scripted poller counts requests per identifier); a poll asked for now (a refresh)
 * still polls at once. The first block runs the poll job's handler by hand, as a second delivery of
 * the job would; the second runs the job through the job engine and a worker.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { pollJobId, PollQueue } from "../../src/services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { PollFailed } from "../../src/services/sources/SourcePoller.ts"
import { dbKinds } from "../utils/Db.ts"
import { deliveriesOf, dropSchemaAtEnd, insertFeed, newWebhook, platformLayer, processLayer, scriptedPoller, waitUntil, world } from "./DeliveryFixtures.ts"
import { rss } from "./ItemFixtures.ts"

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
let n = 0
const newSource = () => `https://slot.test/src-${n++}-${randomBytes(3).toString("hex")}.xml`
const item = (src: string, id: string, age: number) =>
  rss({ id, title: `Item ${id}`, url: `${src}#${id}`, publishedAt: minutesAgo(age), eventAt: minutesAgo(age), feedUrl: src })
/** A whole second, `s` seconds from now: slots are whole seconds. */
const slotIn = (s: number) => new Date((Math.floor(Date.now() / 1000) + s) * 1000)

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))

  /** A feed on a new source serving `items`, baselined by a poll asked for now; the source's id. */
  const baselined = (items: (identifier: string) => ReadonlyArray<ReturnType<typeof item>> = () => []) =>
    Effect.gen(function*() {
      const webhook = yield* newWebhook
      const identifier = newSource()
      script.serve(identifier, items(identifier))
      const feedId = yield* insertFeed({ identifier, webhook })
      const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
      assert.strictEqual((yield* DeliveryEngine.use((d) => d.pollSource(sourceId)))._tag, "Baseline")
      assert.strictEqual(script.polls(identifier), 1)
      return { identifier, sourceId, feedId, webhook }
    })

  const sourceOf = (sourceId: string) => Effect.map(DeliveryStore.use((s) => s.source(sourceId)), Option.getOrThrow)

  describe(`poll slots on ${kind}`, () => {
    // An hour's interval: no slot of the chain comes due while a test runs.
    layer(Layer.provideMerge(processLayer({ pgbossSchema: pgboss, poller, settings: { pollIntervalSeconds: 3600 } }), Layer.provideMerge(platformLayer, base)), {
      excludeTestServices: true,
      timeout: "120 seconds"
    })("the poll job run twice by hand", (it) => {
      it.effect("an unchanged source: one request for one slot, whatever runs it again; a later slot and a poll asked for now still ask", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { identifier, sourceId } = yield* baselined()
          const slot = slotIn(-2)
          const first = yield* delivery.pollSource(sourceId, slot)
          assert.strictEqual(first._tag, "NotModified")
          assert.strictEqual(script.polls(identifier), 2)
          const recorded = yield* sourceOf(sourceId)
          assert.deepStrictEqual(recorded.polledSlot, slot)
          // The job again (its worker died before pg-boss heard it was done), and an older slot's job.
          assert.deepStrictEqual(yield* delivery.pollSource(sourceId, slot), { _tag: "Covered" })
          assert.deepStrictEqual(yield* delivery.pollSource(sourceId, new Date(slot.getTime() - 1000)), { _tag: "Covered" })
          assert.strictEqual(script.polls(identifier), 2, "no second request for one slot")
          assert.deepStrictEqual(yield* sourceOf(sourceId), recorded, "nothing written by the second run")
          // The next slot polls; so does a refresh (no slot), at once, even right after it.
          assert.strictEqual((yield* delivery.pollSource(sourceId, slotIn(-1)))._tag, "NotModified")
          assert.strictEqual(script.polls(identifier), 3)
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "NotModified")
          assert.strictEqual(script.polls(identifier), 4)
        }))

      it.effect("new items: the second run of the job neither asks again nor records a second delivery", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { feedId, identifier, sourceId } = yield* baselined((src) => [item(src, "old", 30)])
          script.serve(identifier, [item(identifier, "old", 30), item(identifier, "new", 1)])
          const slot = slotIn(-1)
          assert.deepInclude(yield* delivery.pollSource(sourceId, slot), { _tag: "Delivered", queued: 1 })
          assert.deepStrictEqual(yield* delivery.pollSource(sourceId, slot), { _tag: "Covered" })
          assert.strictEqual(script.polls(identifier), 2)
          assert.deepStrictEqual((yield* deliveriesOf(feedId)).map((d) => [d.item_id, d.state]), [["new", "pending"]])
        }))

      it.effect("a failing source: the second run neither asks again nor counts a second failure", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const { identifier, sourceId } = yield* baselined()
          script.serve(identifier, new PollFailed({ kind: "http", message: "The feed's server answered 500.", status: 500 }))
          const slot = slotIn(-1)
          assert.strictEqual((yield* delivery.pollSource(sourceId, slot))._tag, "Failed")
          assert.deepStrictEqual(yield* delivery.pollSource(sourceId, slot), { _tag: "Covered" })
          assert.strictEqual(script.polls(identifier), 2)
          assert.deepInclude(yield* sourceOf(sourceId), { failures: 1, polledSlot: slot })
        }))

      it.effect("a worker that died between recording an unchanged poll and sending its successor: the job's second run sends it", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* DeliveryStore
          const { identifier, sourceId } = yield* baselined()
          const slot = slotIn(-1)
          const successor = slotIn(3600)
          const state = (yield* sourceOf(sourceId)).pollState
          // What the dying worker got done: the poll recorded, no successor sent.
          assert.isTrue(yield* store.pollUnchanged(sourceId, { state, at: new Date(), slot, next: successor }))
          const successorId = pollJobId(sourceId, successor.getTime())
          assert.isTrue(Option.isNone(yield* JobEngine.use((e) => e.job(PollQueue, successorId))))
          assert.deepStrictEqual(yield* DeliveryEngine.use((d) => d.pollSource(sourceId, slot)), { _tag: "Covered" })
          assert.strictEqual(script.polls(identifier), 1, "not asked again")
          const job = Option.getOrThrow(yield* JobEngine.use((e) => e.job(PollQueue, successorId)))
          assert.strictEqual(job.state, "created")
          assert.deepStrictEqual(job.startAfter, successor)
          const data = yield* sql<{ data: unknown }>`SELECT data FROM ${sql(pgboss)}.job WHERE id = ${successorId}::uuid`
          assert.deepStrictEqual(data[0]!.data, { sourceId, slot: successor.getTime() })
          // Run once more: the successor is not sent twice.
          const jobs = Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(pgboss)}.job WHERE name = 'feed-poll' AND data->>'sourceId' = ${sourceId}`,
            (rows) => Number(rows[0]!.n)
          )
          const before = yield* jobs
          assert.deepStrictEqual(yield* DeliveryEngine.use((d) => d.pollSource(sourceId, slot)), { _tag: "Covered" })
          assert.strictEqual(yield* jobs, before)
        }))
    })

    layer(
      Layer.provideMerge(
        processLayer({ pgbossSchema: pgboss, poller, settings: { pollIntervalSeconds: 3600 }, worker: {} }),
        Layer.provideMerge(platformLayer, base)
      ),
      { excludeTestServices: true, timeout: "120 seconds" }
    )("on a worker", (it) => {
      it.effect("the job of a slot delivered again after its poll was recorded completes without asking the source; a refresh still asks at once", () =>
        Effect.gen(function*() {
          const engine = yield* JobEngine
          const scheduling = yield* DeliveryScheduling
          const { identifier, sourceId } = yield* baselined()
          const slot = slotIn(0)
          yield* scheduling.planNext({ id: sourceId, module: "rss", identifier }, slot)
          yield* waitUntil("the slot's poll", Effect.sync(() => script.polls(identifier) >= 2), "30 seconds")
          const first = pollJobId(sourceId, slot.getTime())
          const done = (id: string) =>
            Effect.map(engine.job(PollQueue, id), Option.match({ onNone: () => false, onSome: (j) => j.state === "completed" }))
          yield* waitUntil("the slot's job done", done(first), "30 seconds")
          // The same slot's poll once more, as pg-boss hands out a job whose worker went silent.
          const again = Option.getOrThrow(yield* engine.send(PollQueue, { sourceId, slot: slot.getTime() }))
          yield* waitUntil("the second delivery done", done(again), "30 seconds")
          assert.strictEqual(script.polls(identifier), 2, "one request for the slot")
          yield* scheduling.pollNow(sourceId)
          yield* waitUntil("the refresh", Effect.sync(() => script.polls(identifier) >= 3), "30 seconds")
        }), 90_000)
    })
  })
}
