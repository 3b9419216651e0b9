/**
 * A PostgreSQL outage as the log tells it, through the job engine (issue #30, item 3): pg-boss's
 * workers, supervisor and heartbeat each fail every poll while the database is gone, and each
 * failure was an ERROR line of its own (169 in 17 s measured). They are the database's outage, so
 * they go to its outage lines (services/DependencyHealth.ts): one "down", one "back" that counts them.
 * An error of pg-boss that is not the database being unreachable still logs.
 * On PostgreSQL (TEST_DATABASE_URL), behind a TCP proxy of the test's own that it cuts.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schedule, Schema } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { makeJobEngine } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import type { LogLine } from "../utils/CapturedLogs.ts"
import { redisProxy } from "../utils/RedisProxy.ts"
import { waitUntil } from "./JobEngineFixtures.ts"

const url = process.env.TEST_DATABASE_URL
const Queue = JobQueue("outage-log", Schema.Struct({ n: Schema.Number }))
/** Long enough for every loop of pg-boss to fail several times (workers poll every 0.5 s, upkeep every 1 s). */
const OUTAGE_MS = 6_000

const clientLayer = (connection: string) =>
  PgClient.layer({ url: Redacted.make(connection), maxConnections: 4, connectTimeout: "2 seconds" })

/** The lines an operator would see at Warn and above. */
const visible = (lines: ReadonlyArray<LogLine>) => lines.filter((l) => l.level === "Warn" || l.level === "Error" || l.level === "Fatal")
const show = (lines: ReadonlyArray<LogLine>) => lines.map((l) => `${l.level} ${l.text.slice(0, 200)}`).join("\n")

/**
 * A started engine (one worker on `Queue`, supervising every second) over a pool through a proxy the
 * test can cut, its lines captured, an outage state of its own; then `body`, then the schema dropped.
 */
interface Harness {
  readonly cut: () => void
  readonly restore: () => void
  readonly schema: string
  /** Sends a job (retrying while the engine cannot take it) and waits until the worker has run it. */
  readonly roundTrip: Effect.Effect<void>
}

const withEngine = <A, E>(body: (harness: Harness) => Effect.Effect<A, E, CapturedLogs | SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const proxy = yield* redisProxy(new URL(url!.replace(/^postgres(ql)?:/, "tcp:")))
    const proxied = new URL(url!)
    const through = new URL(proxy.url)
    proxied.hostname = through.hostname
    proxied.port = through.port
    const schema = `pgboss_${randomBytes(5).toString("hex")}`
    // The schema is dropped over a connection of its own, whatever state the proxy was left in.
    const direct = yield* Layer.build(clientLayer(url!))
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_away CASCADE`)).pipe(
        Effect.provide(direct),
        Effect.ignore
      )
    )
    return yield* Effect.gen(function*() {
      const engine = yield* makeJobEngine({ schema, pollingInterval: "0.5 seconds", superviseInterval: "1 second", drainTimeout: "5 seconds", queues: [Queue] })
      const done = new Set<number>()
      yield* engine.work(Queue, ({ n }) => Effect.sync(() => done.add(n)))
      let next = 0
      const roundTrip = Effect.gen(function*() {
        const n = ++next
        yield* engine.send(Queue, { n }).pipe(Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 120 }), Effect.orDie)
        yield* waitUntil(`job ${n} run`, Effect.sync(() => done.has(n)), "30 seconds")
      })
      return yield* body({ cut: proxy.cut, restore: proxy.restore, schema, roundTrip })
    }).pipe(Effect.provide(clientLayer(proxied.toString())))
  }).pipe(
    Effect.scoped,
    Effect.provideService(DependencyHealth, makeDependencyHealth()),
    Effect.provide(CapturedLogs.layer),
    Effect.provide(Reactivity.layer)
  )

describe.skipIf(url === undefined)("pg-boss during a PostgreSQL outage", () => {
  it.live("a 6 s outage: one 'down' line and one 'back' line for the database, pg-boss's failures counted in it, no ERROR line of pg-boss", () =>
    withEngine((harness) =>
      Effect.gen(function*() {
        const logs = yield* CapturedLogs
        yield* harness.roundTrip
        assert.deepStrictEqual(visible(yield* logs.take), [], "a quiet start")

        harness.cut()
        yield* Effect.sleep(OUTAGE_MS)
        harness.restore()
        // The engine works again (a job sent and run), and a little more for any late line.
        yield* harness.roundTrip
        yield* Effect.sleep("1 second")

        const lines = visible(yield* logs.take)
        assert.deepStrictEqual(lines.map((l) => l.text.split(" ").slice(0, 3).join(" ")), ["dependency down: database", "dependency back: database"], show(lines))
        // Whichever of the engine's loops met the outage first: a worker's poll, the supervisor, or the
        // table upkeep (every second here); a job just run wakes its worker, which then sleeps a poll.
        assert.include(["pg-boss", "table upkeep"], lines[0]!.annotations["source"], show(lines))
        // Every loop of pg-boss failed several times in 6 s: all of them folded into the outage.
        assert.isAtLeast(Number(lines[1]!.annotations["failures"]), 5, JSON.stringify(lines[1]!.annotations))
      })
    ), 90_000)

  it.live("an error of pg-boss that is not an outage (its schema renamed away) is still logged as an ERROR", () =>
    withEngine(({ roundTrip, schema }) =>
      Effect.gen(function*() {
        const logs = yield* CapturedLogs
        const sql = yield* SqlClient.SqlClient
        yield* roundTrip
        yield* logs.take
        yield* sql.unsafe(`ALTER SCHEMA ${schema} RENAME TO ${schema}_away`)
        yield* waitUntil("an ERROR of pg-boss", Effect.map(logs.lines, (lines) => lines.some((l) => l.level === "Error" && l.text.startsWith("pg-boss:"))), "20 seconds")
        yield* sql.unsafe(`ALTER SCHEMA ${schema}_away RENAME TO ${schema}`)
        const lines = visible(yield* logs.take)
        assert.isFalse(lines.some((l) => l.text.startsWith("dependency down")), show(lines))
      })
    ), 90_000)
})
