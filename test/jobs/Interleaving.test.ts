/**
 * pg-boss shares our SqlClient. On PGlite that client has ONE connection, so a pg-boss statement
 * must never run inside one of our open transactions (it would commit or roll back with it). The
 * proof: many transactions of several statements run while pg-boss sends, claims and completes
 * jobs, and a trigger on pg-boss's job table records the transaction of every write pg-boss makes.
 *
 * - Our transactions keep exactly their rows (committed: both, rolled back: none).
 * - Of all pg-boss writes, the only ones in one of our transactions are the jobs that transaction
 *   sent itself (engine.send inside sql.withTransaction enlists, by design).
 * - No job is lost or run twice (a trapped insert, claim or completion in a rolled-back transaction
 *   would lose a job, run it again, or leave it active).
 * - On PGlite, statements of the one connection are strictly ordered (a sequence shared by our
 *   rows and the audit shows it): between a transaction's first and last statement there is no
 *   pg-boss write but its own, while pg-boss writes do fall between the transactions.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { JobEngine, JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { dbKinds } from "../utils/Db.ts"
import { engineDb, suiteOptions, waitUntil } from "./JobEngineFixtures.ts"

const TRANSACTIONS = 48
const BACKGROUND = 48
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const rollsBack = (tx: number) => tx % 3 === 0

const TxJob = JobQueue("tx-jobs", Schema.Struct({ tx: Schema.Number }))
const BgJob = JobQueue("bg-jobs", Schema.Struct({ n: Schema.Number }))

for (const kind of dbKinds) {
  const options = suiteOptions()
  layer(engineDb(kind, options), { excludeTestServices: true, timeout: "180 seconds" })(`interleaving on ${kind}`, (it) => {
    it.effect("pg-boss never runs inside our transactions, and ours keep exactly their rows", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const engine = yield* JobEngine
        const schema = (yield* sql<{ schema: string }>`SELECT current_schema() AS schema`)[0]!.schema
        yield* sql.unsafe(`CREATE SEQUENCE probe_seq`)
        yield* sql.unsafe(`CREATE TABLE tx_probe (tx int NOT NULL, step int NOT NULL, xid text NOT NULL,
          seq bigint NOT NULL DEFAULT nextval('${schema}.probe_seq'))`)
        yield* sql.unsafe(`CREATE TABLE handled (tx int PRIMARY KEY)`)
        yield* sql.unsafe(`CREATE TABLE boss_writes (xid text NOT NULL, op text NOT NULL, job_id uuid NOT NULL,
          name text NOT NULL, state text NOT NULL, seq bigint NOT NULL DEFAULT nextval('${schema}.probe_seq'))`)
        yield* sql.unsafe(`CREATE FUNCTION ${schema}.boss_write() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO ${schema}.boss_writes (xid, op, job_id, name, state)
              VALUES (pg_current_xact_id()::text, TG_OP, NEW.id, NEW.name, NEW.state::text);
            RETURN NULL;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER boss_write AFTER INSERT OR UPDATE ON ${options.schema}.job
          FOR EACH ROW EXECUTE FUNCTION ${schema}.boss_write()`)

        const runs = { tx: new Map<number, number>(), bg: new Map<number, number>() }
        const count = (map: Map<number, number>, key: number) => Effect.sync(() => map.set(key, (map.get(key) ?? 0) + 1))
        // A delivery-like handler: its own transaction, then pg-boss completes the job.
        yield* engine.work(TxJob, ({ tx }) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO handled (tx) VALUES (${tx})`
            yield* sql`SELECT pg_sleep(0.005)`
          })).pipe(Effect.andThen(count(runs.tx, tx))), { batchSize: 4, localConcurrency: 2 })
        yield* engine.work(BgJob, ({ n }) => count(runs.bg, n), { batchSize: 4, localConcurrency: 2 })
        yield* engine.declare(BgJob)

        const sentIn = new Map<number, string>()
        const transaction = (tx: number) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO tx_probe (tx, step, xid) VALUES (${tx}, 1, pg_current_xact_id()::text)`
            yield* sql`SELECT pg_sleep(0.01)`
            sentIn.set(tx, Option.getOrThrow(yield* engine.send(TxJob, { tx })))
            yield* sql`SELECT pg_sleep(0.01)`
            yield* sql`INSERT INTO tx_probe (tx, step, xid) VALUES (${tx}, 2, pg_current_xact_id()::text)`
            if (rollsBack(tx)) return yield* Effect.fail("roll back")
          })).pipe(Effect.exit)
        const background = Effect.forEach(range(BACKGROUND), (n) => engine.send(BgJob, { n }), { concurrency: 4 })

        const [exits] = yield* Effect.all([
          Effect.forEach(range(TRANSACTIONS), transaction, { concurrency: 6 }),
          background
        ], { concurrency: "unbounded" })
        const committed = range(TRANSACTIONS).filter((tx) => !rollsBack(tx))
        exits.forEach((exit, tx) => assert.strictEqual(Exit.isSuccess(exit), !rollsBack(tx), `transaction ${tx}`))

        yield* waitUntil(
          "every committed and background job to complete",
          Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(options.schema!)}.job
              WHERE name IN ('tx-jobs', 'bg-jobs') AND state = 'completed'`,
            ([row]) => row!.n === committed.length + BACKGROUND
          ),
          "90 seconds"
        )

        // Our transactions: committed ones kept both rows, from one transaction; the others none.
        const probe = yield* sql<{ tx: number; step: number; xid: string; seq: string }>`
          SELECT tx, step, xid, seq::text AS seq FROM tx_probe ORDER BY tx, step`
        assert.deepStrictEqual(probe.map((r) => `${r.tx}.${r.step}`), committed.flatMap((tx) => [`${tx}.1`, `${tx}.2`]))
        const xidOf = new Map(probe.map((r) => [r.tx, r.xid]))
        for (const tx of committed) {
          assert.deepStrictEqual(new Set(probe.filter((r) => r.tx === tx).map((r) => r.xid)).size, 1)
        }

        // Jobs: each committed transaction's job ran once; rolled-back ones never existed; none lost.
        for (const tx of range(TRANSACTIONS)) {
          assert.strictEqual(runs.tx.get(tx), rollsBack(tx) ? undefined : 1, `job of transaction ${tx}`)
          if (rollsBack(tx)) assert.isTrue(Option.isNone(yield* engine.job(TxJob, sentIn.get(tx)!)))
        }
        for (const n of range(BACKGROUND)) assert.strictEqual(runs.bg.get(n), 1, `background job ${n}`)
        const handled = yield* sql<{ tx: number }>`SELECT tx FROM handled ORDER BY tx`
        assert.deepStrictEqual(handled.map((r) => r.tx), committed)

        // pg-boss writes inside our transactions: exactly the jobs each sent itself, nothing else.
        const writes = yield* sql<{ xid: string; op: string; job_id: string; name: string; state: string; seq: string }>`
          SELECT xid, op, job_id::text AS job_id, name, state, seq::text AS seq FROM boss_writes`
        const ours = new Map(committed.map((tx) => [xidOf.get(tx)!, tx]))
        const inOurs = writes.filter((w) => ours.has(w.xid))
        assert.sameDeepMembers(
          inOurs.map((w) => ({ tx: ours.get(w.xid), op: w.op, job: w.job_id })),
          committed.map((tx) => ({ tx: tx as number | undefined, op: "INSERT", job: sentIn.get(tx)! }))
        )
        // The audit saw pg-boss at work: every background insert, and the claims and completions.
        assert.strictEqual(writes.filter((w) => w.name === "bg-jobs" && w.op === "INSERT").length, BACKGROUND)
        assert.strictEqual(
          writes.filter((w) => w.op === "UPDATE" && w.state === "completed").length,
          committed.length + BACKGROUND
        )

        if (kind === "pglite") {
          // One connection, so one order: nothing of pg-boss's between a transaction's first and
          // last statement but its own job; pg-boss writes between transactions while they ran.
          const seq = (r: { seq: string }) => BigInt(r.seq)
          const windows = committed.map((tx) => {
            const rows = probe.filter((r) => r.tx === tx)
            return { tx, from: seq(rows[0]!), to: seq(rows[1]!) }
          })
          for (const { from, to, tx } of windows) {
            const inside = writes.filter((w) => seq(w) > from && seq(w) < to)
            assert.deepStrictEqual(inside.map((w) => w.job_id), [sentIn.get(tx)], `pg-boss writes inside transaction ${tx}`)
          }
          const first = windows.reduce((m, w) => (w.from < m ? w.from : m), windows[0]!.from)
          const last = windows.reduce((m, w) => (w.to > m ? w.to : m), windows[0]!.to)
          const between = writes.filter((w) => w.name === "bg-jobs" && seq(w) > first && seq(w) < last)
          assert.isAbove(between.length, 0, "pg-boss worked while the transactions ran")
        }
      }).pipe(Effect.scoped), 180_000)
  })
}
