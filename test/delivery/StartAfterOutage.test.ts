/**
 * `start` (a feed created on a source) after a worker outage (delivery.md §1, §6: a source is
 * polled once per interval). The source's planned poll is more than OVERDUE_MS late, yet its slot's
 * job is still queued: no worker ran it. That job polls the source once workers are back; a poll
 * asked for now as well fetched the source twice within seconds. A planned poll whose job is gone
 * or done (lost) still gets a poll now, as before. Clocks are pinned: no test waits on time.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { pollJobId } from "../../src/services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling, OVERDUE_MS } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { dbKinds } from "../utils/Db.ts"
import { dropSchemaAtEnd, insertFeed, newWebhook, pinnedAt, platformLayer, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"
import { schedulingLayer } from "./SchedulingFixtures.ts"

let n = 0
const newIdentifier = () => `https://outage.test/${n++}-${randomBytes(3).toString("hex")}.xml`
/** A whole second (slots are whole seconds), `s` seconds from now. */
const secondsFromNow = (s: number) => (Math.floor(Date.now() / 1000) + s) * 1000

/** Every poll job of a source, slotted or asked for now, in the order sent. */
const pollJobsOf = (pgboss: string, sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; state: string; slot: string | null; start_after: Date }>`SELECT id::text AS id, state,
        data->>'slot' AS slot, start_after FROM ${sql(pgboss)}.job
      WHERE name = 'feed-poll' AND data->>'sourceId' = ${sourceId} ORDER BY created_on, id`)

const sourceOf = (sourceId: string) => Effect.map(DeliveryStore.use((s) => s.source(sourceId)), Option.getOrThrow)

for (const kind of dbKinds) {
  describe(`start after a worker outage, on ${kind}`, () => {
    const pgboss = `pgboss_${randomBytes(5).toString("hex")}`

    layer(schedulingLayer(kind, pgboss), { excludeTestServices: true, timeout: "120 seconds" })("the jobs sent", (it) => {
      const jobsOf = (sourceId: string) => pollJobsOf(pgboss, sourceId)
      const setJob = (id: string, state: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE ${sql(pgboss)}.job SET state = ${state} WHERE id = ${id}::uuid`)
      const startAt = (sourceId: string, at: number) => DeliveryScheduling.use((s) => s.start(sourceId)).pipe(pinnedAt(at))

      /**
       * A source whose planned poll at `planned` was sent as the chain sends it (its slot's job,
       * state `created`) and recorded as its next_poll_at: the source's id and that job's id.
       */
      const plannedSource = (planned: number) =>
        Effect.gen(function*() {
          const s = yield* DeliveryScheduling
          const identifier = newIdentifier()
          const sourceId = yield* s.attach("rss", identifier)
          yield* s.planNext({ id: sourceId, module: "rss", identifier }, new Date(planned))
          const jobs = yield* jobsOf(sourceId)
          assert.deepStrictEqual(jobs.map((j) => [j.id, j.state, j.slot]), [[pollJobId(sourceId, planned), "created", String(planned)]])
          assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), planned)
          return { sourceId, slotJob: jobs[0]!.id }
        })

      for (const state of ["created", "retry", "active"] as const) {
        it.effect(`the overdue slot's job still ${state}: no poll now, nothing else changed`, () =>
          Effect.gen(function*() {
            const now = secondsFromNow(0)
            const planned = now - OVERDUE_MS - 180_000
            const { slotJob, sourceId } = yield* plannedSource(planned)
            yield* setJob(slotJob, state)
            yield* startAt(sourceId, now)
            yield* startAt(sourceId, now + 1_000)
            assert.deepStrictEqual((yield* jobsOf(sourceId)).map((j) => [j.id, j.state]), [[slotJob, state]])
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), planned)
          }))
      }

      for (const state of ["completed", "failed", "cancelled", "absent"] as const) {
        it.effect(`the overdue slot's job ${state} (the poll is lost): one poll now, recorded as planned now`, () =>
          Effect.gen(function*() {
            const now = secondsFromNow(0)
            const planned = now - OVERDUE_MS - 180_000
            const { slotJob, sourceId } = yield* plannedSource(planned)
            if (state === "absent") {
              yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM ${sql(pgboss)}.job WHERE id = ${slotJob}::uuid`)
            } else {
              yield* setJob(slotJob, state)
            }
            yield* startAt(sourceId, now)
            const asked = (yield* jobsOf(sourceId)).filter((j) => j.slot === null)
            assert.deepStrictEqual(asked.map((j) => j.state), ["created"])
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), now)
          }))
      }

      it.effect("only the job of the planned slot counts: a queued job of another slot does not stop the poll now", () =>
        Effect.gen(function*() {
          const now = secondsFromNow(0)
          const planned = now - OVERDUE_MS - 180_000
          // A queued job a second off the planned slot (another slot), and the source planned at `planned`.
          const { sourceId } = yield* plannedSource(planned - 1_000)
          yield* DeliveryStore.use((s) => s.setNextPoll(sourceId, new Date(planned)))
          yield* startAt(sourceId, now)
          const asked = (yield* jobsOf(sourceId)).filter((j) => j.slot === null)
          assert.lengthOf(asked, 1)
          assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), now)
        }))

      it.effect("a planned poll late by OVERDUE_MS or less, its job queued: nothing sent (as before)", () =>
        Effect.gen(function*() {
          const now = secondsFromNow(0)
          for (const planned of [now - OVERDUE_MS, now - 60_000, now + 60_000]) {
            const { slotJob, sourceId } = yield* plannedSource(planned)
            yield* startAt(sourceId, now)
            assert.deepStrictEqual((yield* jobsOf(sourceId)).map((j) => j.id), [slotJob], `planned at now ${planned - now} ms`)
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), planned)
          }
        }))

      it.effect("a planned poll late by OVERDUE_MS or less, its job done: nothing sent either (as before)", () =>
        Effect.gen(function*() {
          const now = secondsFromNow(0)
          const { slotJob, sourceId } = yield* plannedSource(now - 60_000)
          yield* setJob(slotJob, "completed")
          yield* startAt(sourceId, now)
          assert.deepStrictEqual((yield* jobsOf(sourceId)).map((j) => j.id), [slotJob])
        }))

      it.effect("a refresh (pollNow) still polls now while the overdue slot's job waits", () =>
        Effect.gen(function*() {
          const now = secondsFromNow(0)
          const { sourceId } = yield* plannedSource(now - OVERDUE_MS - 180_000)
          yield* DeliveryScheduling.use((s) => s.pollNow(sourceId)).pipe(pinnedAt(now))
          assert.lengthOf((yield* jobsOf(sourceId)).filter((j) => j.slot === null), 1)
          assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), now)
        }))
    })

    const { layer: poller, script } = scriptedPoller()
    const base = dropSchemaAtEnd(`${pgboss}_w`).pipe(Layer.provideMerge(world(kind)))
    layer(
      Layer.provideMerge(
        // An hour's interval: the chain's next slot lies in the coming hour, and its successor after that.
        processLayer({ pgbossSchema: `${pgboss}_w`, poller, settings: { pollIntervalSeconds: 3600 } }),
        Layer.provideMerge(platformLayer, base)
      ),
      { excludeTestServices: true, timeout: "120 seconds" }
    )("the source's fetches when workers are back", (it) => {
      it.effect("a feed created during the outage: the source is fetched once for the late slot, not twice", () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const scheduling = yield* DeliveryScheduling
          const sql = yield* SqlClient.SqlClient
          const identifier = newIdentifier()
          script.serve(identifier, [])
          yield* insertFeed({ identifier, webhook: yield* newWebhook })
          const sourceId = yield* scheduling.attach("rss", identifier)
          // Baselined by a poll; it planned the chain's next slot.
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")
          const slot = (yield* sourceOf(sourceId)).nextPollAt!.getTime()
          assert.strictEqual(script.polls(identifier), 1)

          // No worker ran since: 3 minutes after that slot, a second feed is created on the source.
          const later = slot + OVERDUE_MS + 60_000
          yield* insertFeed({ identifier, webhook: yield* newWebhook })
          yield* scheduling.start(sourceId).pipe(pinnedAt(later))

          // The workers are back (at `later`): each job due runs, as a worker would run it, until none is left.
          const due = Effect.map(pollJobsOf(`${pgboss}_w`, sourceId), (jobs) =>
            jobs.filter((j) => (j.state === "created" || j.state === "retry") && j.start_after.getTime() <= later))
          for (let round = 0; round < 10; round++) {
            const [job] = yield* due
            if (job === undefined) break
            yield* delivery.pollSource(sourceId, job.slot === null ? undefined : new Date(Number(job.slot))).pipe(pinnedAt(later))
            yield* sql`UPDATE ${sql(`${pgboss}_w`)}.job SET state = 'completed', completed_on = now() WHERE id = ${job.id}::uuid`
          }
          assert.lengthOf(yield* due, 0)
          assert.strictEqual(script.polls(identifier), 2, "one fetch for the late slot")
          // The chain goes on from there: its next slot is still to come.
          assert.isAbove((yield* sourceOf(sourceId)).nextPollAt!.getTime(), later)
        }))
    })
  })
}
