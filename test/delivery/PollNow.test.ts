/**
 * `DeliveryScheduling.pollNow` (a refresh, a re-enabled feed, the repair pass) asks for a poll of
 * the source now, whatever is planned. A poll asked after an earlier one already ran must run too,
 * even in the same second: it was asked because something changed after that poll read the feeds.
 * The clock of the `pollNow` calls is pinned to one instant, so "the same second" does not depend
 * on how fast the machine is; a real worker runs the jobs.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { dbKinds } from "../utils/Db.ts"
import { dropSchemaAtEnd, insertFeed, newWebhook, platformLayer, processLayer, scriptedPoller, stoppedAt, waitUntil, world } from "./DeliveryFixtures.ts"

let n = 0
const newSource = () => `https://now.test/src-${n++}-${randomBytes(3).toString("hex")}.xml`

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  // An hour's interval: the chain's own polls stay out of the way.
  const worker = processLayer({ pgbossSchema: pgboss, poller, settings: { pollIntervalSeconds: 3600 }, worker: {} })

  /** A feed on a new source, and the source's id. */
  const feedOnNewSource = Effect.gen(function*() {
    const webhook = yield* newWebhook
    const identifier = newSource()
    script.serve(identifier, [])
    yield* insertFeed({ identifier, webhook })
    const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
    return { identifier, sourceId }
  })

  const polled = (identifier: string, times: number) =>
    waitUntil(`poll ${times} of ${identifier}`, Effect.sync(() => script.polls(identifier) >= times), "20 seconds")

  /** Until the source's poll recorded its successor (the job is done with the source). */
  const settled = (sourceId: string) =>
    waitUntil(
      "the poll to finish",
      Effect.map(DeliveryStore.use((s) => s.source(sourceId)), (s) => {
        const source = Option.getOrThrow(s)
        return source.lastPollAt !== null && source.nextPollAt !== null && source.nextPollAt.getTime() > Date.now()
      }),
      "20 seconds"
    )

  describe(`pollNow on ${kind}`, () => {
    layer(Layer.provideMerge(processLayer({ pgbossSchema: pgboss, poller }), Layer.provideMerge(platformLayer, base)), {
      excludeTestServices: true,
      timeout: "120 seconds"
    })("before any worker runs it", (it) => {
      it.effect("requests for a source whose poll still waits are one job (two repair passes, two feeds created at once)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { sourceId } = yield* feedOnNewSource
          const pollNow = DeliveryScheduling.use((s) => s.pollNow(sourceId))
          yield* Effect.all([pollNow, pollNow], { concurrency: 2 })
          yield* pollNow
          const jobs = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(pgboss)}.job
            WHERE name = 'feed-poll' AND data->>'sourceId' = ${sourceId}`
          assert.strictEqual(Number(jobs[0]!.n), 1)
        }))
    })

    layer(Layer.provideMerge(platformLayer, base), { excludeTestServices: true, timeout: "120 seconds" })("same second", (it) => {
      it.effect("a second poll asked in the same second, after the first one ran, runs too; next_poll_at is never left in the past", () =>
        Effect.gen(function*() {
          const { identifier, sourceId } = yield* feedOnNewSource
          const at = Date.now()
          const pollNow = DeliveryScheduling.use((s) => s.pollNow(sourceId)).pipe(Effect.provideService(Clock.Clock, stoppedAt(at)))
          yield* pollNow
          yield* polled(identifier, 1)
          yield* settled(sourceId)
          yield* pollNow
          yield* polled(identifier, 2)
          yield* settled(sourceId)
          assert.strictEqual(script.polls(identifier), 2)
        }).pipe(Effect.provide(worker)), 90_000)

      it.effect("a poll asked in the second of the source's planned poll, after that poll ran, runs too", () =>
        Effect.gen(function*() {
          const scheduling = yield* DeliveryScheduling
          const { identifier, sourceId } = yield* feedOnNewSource
          const at = new Date(Math.floor(Date.now() / 1000) * 1000)
          // The chain's poll of this very second (as a successor or the repair pass would send it).
          yield* scheduling.planNext({ id: sourceId, module: "rss", identifier }, at)
          yield* polled(identifier, 1)
          yield* settled(sourceId)
          yield* scheduling.pollNow(sourceId).pipe(Effect.provideService(Clock.Clock, stoppedAt(at.getTime() + 400)))
          yield* polled(identifier, 2)
          yield* settled(sourceId)
        }).pipe(Effect.provide(worker)), 90_000)
    })
  })
}
