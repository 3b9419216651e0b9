/**
 * The database functions a form write runs are planned once per connection (migration 0013,
 * issue #16): the steps' functions are PL/pgSQL (a `LANGUAGE sql` body with an aggregate is parsed
 * and planned again by every statement that calls it), and `audit_bucket` is inlined into the
 * plans that call it — with the same answers as the body it replaced, at every bucket boundary.
 * The forms' answers themselves are held by test/perf/FormsOneStatement.test.ts and the forms suites.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_LEVEL_SECONDS } from "../../src/layers/audit/AuditBuckets.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

/** 0004's body of `audit_bucket`, which 0013 replaced: the reference the new one must equal. */
const OLD_BUCKET = (at: string, level: string) =>
  `floor(extract(epoch FROM ${at}) / (ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}])[${level} + 1])::bigint`

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true, timeout: 120_000 })(`planned once on ${kind}`, (it) => {
    it.effect("the steps' functions are PL/pgSQL, whose plans a connection keeps", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ proname: string; lanname: string }>`
          SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.proname IN ('forms_steps_insert', 'forms_steps_of', 'forms_create', 'forms_update', 'forms_read', 'forms_delete')
            -- This suite's own schema: other files migrate schemas of their own on the same database meanwhile.
            AND p.pronamespace = current_schema()::regnamespace
          ORDER BY p.proname`
        assert.deepStrictEqual(rows.map((r) => `${r.proname}:${r.lanname}`), [
          "forms_create:plpgsql",
          "forms_delete:plpgsql",
          "forms_read:plpgsql",
          "forms_steps_insert:plpgsql",
          "forms_steps_of:plpgsql",
          "forms_update:plpgsql"
        ])
      }))

    it.effect("audit_bucket is inlined: a plan that uses it calls no function of that name", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = (yield* sql.unsafe<{ "QUERY PLAN": string }>(
          `EXPLAIN (VERBOSE, COSTS OFF) SELECT bucket FROM audit_count_shards
           WHERE server_id = 'x' AND bot_id = 'y' AND level = 2 AND bucket = audit_bucket(now(), 2) AND shard = 0`
        )).map((r) => r["QUERY PLAN"]).join("\n")
        assert.notInclude(plan, "audit_bucket(", plan)
        assert.include(plan, "EXTRACT(epoch FROM", plan)
      }))

    it.effect("audit_bucket answers as 0004's body did: random instants, and each side of every boundary, in two time zones", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // 20,000 random instants from 1900 to 2300, and for ±2,000 buckets of each level the
        // boundary itself and one microsecond either side (pre-1970 ones included).
        const instants = `(
          SELECT timestamptz '1900-01-01 00:00:00+00' + (random() * 400 * 365.25 * 86400) * interval '1 second' AS at
          FROM generate_series(1, 20000)
          UNION ALL
          SELECT timestamptz '1970-01-01 00:00:00+00' + (b::bigint * s) * interval '1 second' + d * interval '1 microsecond'
          FROM generate_series(-2000, 2000) b, unnest(ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}]) s, unnest(ARRAY[-1, 0, 1]) d
        ) t`
        const compare = sql.unsafe<{ n: string; differ: string; sample: string | null }>(
          `SELECT count(*)::text AS n,
             count(*) FILTER (WHERE audit_bucket(at, l) <> ${OLD_BUCKET("at", "l")})::text AS differ,
             min(at::text) FILTER (WHERE audit_bucket(at, l) <> ${OLD_BUCKET("at", "l")}) AS sample
           FROM ${instants}, generate_series(0, 2) l`
        )
        for (const zone of ["UTC", "America/New_York"]) {
          const [r] = yield* sql.withTransaction(Effect.andThen(sql.unsafe(`SET LOCAL timezone = '${zone}'`), compare))
          assert.strictEqual(r!.n, String((20000 + 4001 * 3 * 3) * 3), zone)
          assert.strictEqual(r!.differ, "0", `${zone}: first differing instant ${r!.sample}`)
        }
      }))
  })
}
