/**
 * When DeliveryScheduling sends polls (delivery.md §1, §6), seen by its users: the feeds service
 * (create → `start`, refresh → `pollNow`, re-enable → `reenable`) and the worker (the repair pass's
 * `start`, a poll's `planNext`). No worker runs here: the test reads and moves pg-boss's jobs itself
 * (the state a worker would leave), and pins the scheduler's clock to one instant, so the 120 s
 * overdue boundary and "the same second" never depend on the machine's speed.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Option, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { DeliveryScheduling, OVERDUE_MS } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { nextSlot, slotOffset } from "../../src/services/delivery/DeliveryQueues.ts"
import { dbKinds } from "../utils/Db.ts"
import { insertFeed, pinnedAt } from "./DeliveryFixtures.ts"
import { nowPollJobs, schedulingLayer } from "./SchedulingFixtures.ts"

let n = 0
const newIdentifier = () => `https://sched.test/${n++}-${randomBytes(3).toString("hex")}.xml`
/** A feed row needs a webhook; no message is posted here, so any id does. */
const webhook = () => ({ id: String(800_000_000_000_000_000n + BigInt(n++)), token: "unused" })

/** Sources the backstop below treats as pushed: polled every 1800 s instead of the module's 60 s. */
const pushed = new Set<string>()
const asked: Array<[string, number]> = []

describe("the scheduler's service key", () => {
  it.effect("a process built without the scheduler says which service it lacks", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        DeliveryScheduling.use((s) => s.pollNow("1")) as Effect.Effect<void, unknown, never>
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "gateway/DeliveryScheduling")
    }))
})

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`

  describe(`DeliveryScheduling on ${kind}`, () => {
    layer(schedulingLayer(kind, pgboss, {
      intervalOf: (source, interval) => {
        asked.push([source.id, interval])
        return pushed.has(source.id) ? 1800 : interval
      }
    }), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
      const scheduling = DeliveryScheduling
      const newSource = (module: "rss" | "streaming" = "rss") =>
        Effect.flatMap(scheduling, (s) => s.attach(module, newIdentifier()))
      const sourceOf = (sourceId: string) => Effect.map(DeliveryStore.use((s) => s.source(sourceId)), Option.getOrThrow)
      const setJob = (id: string, state: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE ${sql(pgboss)}.job SET state = ${state} WHERE id = ${id}::uuid`)
      /** What a worker's poll leaves: its job completed, the source polled at `at` (unless null). */
      const pollRan = (jobId: string, sourceId: string, at: Date | null) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ${sql(pgboss)}.job SET state = 'completed', completed_on = now() WHERE id = ${jobId}::uuid`
          if (at !== null) yield* sql`UPDATE feed_sources SET last_poll_at = ${at} WHERE id = ${sourceId}`
        })
      const nowJobs = (sourceId: string) => nowPollJobs(pgboss, sourceId)

      describe("start (a feed created, the repair pass)", () => {
        const startAt = (sourceId: string, at: number) =>
          Effect.flatMap(scheduling, (s) => s.start(sourceId)).pipe(pinnedAt(at))
        const plannedAt = (sourceId: string, at: Date) => DeliveryStore.use((s) => s.setNextPoll(sourceId, at))

        it.effect("a source never planned gets one poll now, recorded as planned now", () =>
          Effect.gen(function*() {
            const sourceId = yield* newSource()
            const at = Date.now()
            yield* startAt(sourceId, at)
            assert.lengthOf(yield* nowJobs(sourceId), 1)
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), at)
          }))

        it.effect("a source whose planned poll is still to come (polled for other feeds) gets nothing", () =>
          Effect.gen(function*() {
            const sourceId = yield* newSource()
            const at = Date.now()
            const planned = new Date(at + 60_000)
            yield* plannedAt(sourceId, planned)
            yield* startAt(sourceId, at)
            assert.deepStrictEqual(yield* nowJobs(sourceId), [])
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), planned.getTime())
          }))

        it.effect("a planned poll late by less than OVERDUE_MS, or exactly that, is not lost: nothing sent", () =>
          Effect.gen(function*() {
            const late = yield* newSource()
            const boundary = yield* newSource()
            const at = Date.now()
            yield* plannedAt(late, new Date(at - 60_000))
            yield* plannedAt(boundary, new Date(at - OVERDUE_MS))
            yield* startAt(late, at)
            yield* startAt(boundary, at)
            assert.deepStrictEqual(yield* nowJobs(late), [])
            assert.deepStrictEqual(yield* nowJobs(boundary), [])
            assert.strictEqual((yield* sourceOf(boundary)).nextPollAt?.getTime(), at - OVERDUE_MS)
          }))

        it.effect("a planned poll overdue by more than OVERDUE_MS is lost: a poll now", () =>
          Effect.gen(function*() {
            const sourceId = yield* newSource()
            const at = Date.now()
            yield* plannedAt(sourceId, new Date(at - OVERDUE_MS - 1))
            yield* startAt(sourceId, at)
            assert.lengthOf(yield* nowJobs(sourceId), 1)
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), at)
          }))

        it.effect("start and pollNow of a source that does not exist send nothing and fail not", () =>
          Effect.gen(function*() {
            const s = yield* scheduling
            const missing = "987654321012"
            yield* s.start(missing)
            yield* s.pollNow(missing)
            assert.deepStrictEqual(yield* nowJobs(missing), [])
          }))
      })

      describe("pollNow (a refresh)", () => {
        const pollNowAt = (sourceId: string, at: number) =>
          Effect.flatMap(scheduling, (s) => s.pollNow(sourceId)).pipe(pinnedAt(at))

        it.effect("two sources refreshed at once get a poll each (never polled, and one polled)", () =>
          Effect.gen(function*() {
            const a = yield* newSource()
            const b = yield* newSource()
            const c = yield* newSource()
            const sql = yield* SqlClient.SqlClient
            yield* sql`UPDATE feed_sources SET last_poll_at = ${new Date(Date.now() - 5_000)} WHERE id = ${c}`
            const at = Date.now()
            yield* Effect.all([pollNowAt(a, at), pollNowAt(b, at), pollNowAt(c, at)], { concurrency: 3 })
            for (const id of [a, b, c]) assert.lengthOf(yield* nowJobs(id), 1, `source ${id}`)
          }))

        for (const state of ["created", "retry", "active"] as const) {
          it.effect(`refreshes while the poll asked for waits or runs (${state}) are that one job`, () =>
            Effect.gen(function*() {
              const sourceId = yield* newSource()
              const at = Date.now()
              yield* pollNowAt(sourceId, at)
              const [job] = yield* nowJobs(sourceId)
              yield* setJob(job!.id, state)
              yield* pollNowAt(sourceId, at + 1_000)
              yield* pollNowAt(sourceId, at + 2_000)
              assert.deepStrictEqual((yield* nowJobs(sourceId)).map((j) => j.id), [job!.id])
              assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), at + 2_000)
            }))
        }

        it.effect("after each poll ran, two refreshes are one new poll (never polled, then polled, then polled again)", () =>
          Effect.gen(function*() {
            const sourceId = yield* newSource()
            const at = Date.now()
            const twice = Effect.all([pollNowAt(sourceId, at), pollNowAt(sourceId, at)], { concurrency: 1 })
            yield* twice
            const first = yield* nowJobs(sourceId)
            assert.lengthOf(first, 1)
            yield* pollRan(first[0]!.id, sourceId, new Date(at - 30_000))
            yield* twice
            const second = yield* nowJobs(sourceId)
            assert.lengthOf(second, 2)
            const next = second.find((j) => j.id !== first[0]!.id)!
            assert.strictEqual(next.state, "created")
            yield* pollRan(next.id, sourceId, new Date(at - 10_000))
            yield* twice
            assert.lengthOf(yield* nowJobs(sourceId), 3)
          }))

        it.effect("a refresh after a poll that ran but left last_poll_at as it was is a new poll", () =>
          Effect.gen(function*() {
            const sourceId = yield* newSource()
            const at = Date.now()
            yield* pollNowAt(sourceId, at)
            const [job] = yield* nowJobs(sourceId)
            yield* pollRan(job!.id, sourceId, null)
            yield* pollNowAt(sourceId, at + 500)
            const jobs = yield* nowJobs(sourceId)
            assert.lengthOf(jobs, 2)
            assert.strictEqual(jobs.find((j) => j.id !== job!.id)?.state, "created")
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), at + 500)
          }))

        it.effect("pollNow and planNext are traced, with the source", () =>
          Effect.gen(function*() {
            const s = yield* scheduling
            const sourceId = yield* newSource()
            const spans: Array<Tracer.NativeSpan> = []
            const tracer = Tracer.make({
              span(options) {
                const span = new Tracer.NativeSpan(options)
                spans.push(span)
                return span
              }
            })
            const traced = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provideService(self, Tracer.Tracer, tracer)
            yield* traced(s.pollNow(sourceId))
            yield* traced(s.planNext({ id: sourceId, module: "rss", identifier: "x" }, new Date(Date.now() + 3_600_000)))
            const mine = spans
              .filter((sp) => sp.name.startsWith("DeliveryScheduling."))
              .map((sp) => [sp.name, sp.attributes.get("source")])
            assert.deepStrictEqual(mine, [["DeliveryScheduling.pollNow", sourceId], ["DeliveryScheduling.planNext", sourceId]])
          }))
      })

      describe("reenable", () => {
        /** A feed whose source has failed three times: the feed's and the source's ids. */
        const feedOfFailingSource = Effect.gen(function*() {
          const s = yield* scheduling
          const identifier = newIdentifier()
          const feedId = yield* insertFeed({ identifier, webhook: webhook() })
          const sourceId = yield* s.attach("rss", identifier)
          yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`UPDATE feed_sources SET failures = 3, failing_since = now(), last_error = 'HTTP 500' WHERE id = ${sourceId}`)
          return { s, feedId, sourceId }
        })

        it.effect("a disabled feed is active again and its source's failures forgotten: the source's id", () =>
          Effect.gen(function*() {
            const { s, feedId, sourceId } = yield* feedOfFailingSource
            yield* DeliveryStore.use((st) => st.setFeedState([feedId], ["active"], "disabled", "failing"))
            assert.deepStrictEqual(yield* s.reenable(feedId), Option.some(sourceId))
            const source = yield* sourceOf(sourceId)
            assert.deepStrictEqual([source.failures, source.lastError], [0, null])
          }))

        it.effect("a feed that is not disabled: None, and its source's failures are kept", () =>
          Effect.gen(function*() {
            const { s, feedId, sourceId } = yield* feedOfFailingSource
            assert.deepStrictEqual(yield* s.reenable(feedId), Option.none())
            const source = yield* sourceOf(sourceId)
            assert.deepStrictEqual([source.failures, source.lastError], [3, "HTTP 500"])
          }))

        it.effect("a disabled feed whose source is gone: None", () =>
          Effect.gen(function*() {
            const s = yield* scheduling
            const feedId = yield* insertFeed({ identifier: newIdentifier(), webhook: webhook() })
            yield* DeliveryStore.use((st) => st.setFeedState([feedId], ["active"], "disabled", "failing"))
            assert.deepStrictEqual(yield* s.reenable(feedId), Option.none())
          }))
      })

      describe("a pushed source (PushBackstop present)", () => {
        it.effect("is planned on the backstop's interval; a source not pushed on its module's", () =>
          Effect.gen(function*() {
            const s = yield* scheduling
            const identifier = newIdentifier()
            const sourceId = yield* s.attach("streaming", identifier)
            const other = newIdentifier()
            const otherId = yield* s.attach("streaming", other)
            pushed.add(sourceId)
            const at = Date.now()
            const source = { id: sourceId, module: "streaming", identifier } as const
            const next = yield* s.nextPlanned(source).pipe(pinnedAt(at))
            const expected = nextSlot(slotOffset("streaming", identifier, 1800), 1800, at)
            assert.strictEqual(next.getTime(), expected)
            assert.isAbove(next.getTime(), at)
            assert.isAtMost(next.getTime(), at + 1_800_000)
            // The backstop was asked with the module's interval.
            assert.deepInclude(asked, [sourceId, 60])

            const planned = yield* s.planNext(source).pipe(pinnedAt(at))
            assert.strictEqual(planned.getTime(), expected)
            assert.strictEqual((yield* sourceOf(sourceId)).nextPollAt?.getTime(), expected)

            const notPushed = yield* s.nextPlanned({ id: otherId, module: "streaming", identifier: other }).pipe(
              pinnedAt(at)
            )
            assert.strictEqual(notPushed.getTime(), nextSlot(slotOffset("streaming", other, 60), 60, at))
          }))
      })
    })
  })
}
