/**
 * A first poll asked for twice at once (each worker runs a repair pass at start: delivery.md §6)
 * is one poll. The poll asked for now is keyed by (source, its last poll); a pass that read the
 * source before another pass's poll of that key ran, and looks the key up after it finished, used to
 * send a second poll at once: the source fetched twice in one slot (what the CI run of the
 * several-workers test caught: two fetches 1 s apart at the start). Now it reads the source again and
 * finds it planned.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { PollQueue } from "../../src/services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { dbKinds } from "../utils/Db.ts"
import { dropSchemaAtEnd, insertFeed, newWebhook, platformLayer, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))

  /** Runs once, at the first look-up of a poll job by id: set by the test. */
  let onPollLookup: ((id: string) => Effect.Effect<void>) | undefined
  const engine = processLayer({
    pgbossSchema: pgboss,
    poller,
    // An hour's interval: the successor's slot is far away.
    settings: { pollIntervalSeconds: 3600 },
    wrapEngine: (e) =>
      JobEngine.of({
        ...e,
        job: (queue, id) => {
          const step = onPollLookup
          if (queue.name !== PollQueue.name || step === undefined) return e.job(queue, id)
          onPollLookup = undefined
          return Effect.andThen(step(id), e.job(queue, id))
        }
      })
  })

  describe(`a first poll asked for twice at once, on ${kind}`, () => {
    layer(Layer.provideMerge(engine, Layer.provideMerge(platformLayer, base)), { excludeTestServices: true, timeout: "120 seconds" })("by hand", (it) => {
      it.effect("the other pass's poll ran between this pass's read and its look-up: no second poll", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const scheduling = yield* DeliveryScheduling
          const sql = yield* SqlClient.SqlClient
          const jobs = yield* JobEngine
          const webhook = yield* newWebhook
          const identifier = `https://race.test/${randomBytes(3).toString("hex")}.xml`
          script.serve(identifier, [])
          yield* insertFeed({ identifier, webhook })
          const sourceId = yield* scheduling.attach("rss", identifier)

          // This pass has read the source (never polled, nothing planned); right then another
          // worker's pass sends the poll of the same key, and a worker runs it to the end.
          let keyed = ""
          onPollLookup = (id) =>
            Effect.gen(function*() {
              keyed = id
              assert.isTrue(Option.isSome(yield* jobs.send(PollQueue, { sourceId }, { id })))
              assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")
              yield* sql`UPDATE ${sql(pgboss)}.job SET state = 'completed', completed_on = now() WHERE id = ${id}::uuid`
            }).pipe(Effect.orDie)

          yield* scheduling.start(sourceId)
          assert.notStrictEqual(keyed, "", "the interleaving happened")
          assert.strictEqual(script.polls(identifier), 1)
          // No poll asked for now besides the one that ran; the chain's successor is planned.
          const now = yield* sql<{ id: string; state: string }>`SELECT id::text AS id, state FROM ${sql(pgboss)}.job
            WHERE name = ${PollQueue.name} AND data->>'sourceId' = ${sourceId} AND data->'slot' IS NULL`
          assert.deepStrictEqual(now.map((j) => [j.id, j.state]), [[keyed, "completed"]])
          const source = Option.getOrThrow(yield* DeliveryStore.use((s) => s.source(sourceId)))
          // The chain's successor: a slot of the source's own (anywhere in the coming hour, by its
          // offset), still to come; a poll asked for now would have recorded the time of asking.
          const next = source.nextPollAt!.getTime()
          assert.isAbove(next, Date.now(), "the next poll is still to come")
          assert.strictEqual(next, scheduling.nextSlotOf({ module: "rss", identifier }, next - 1).getTime(), "the next poll is on one of the source's slots")
        }))
    })
  })
}
