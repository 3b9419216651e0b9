/**
 * The adapter that runs pg-boss over our SqlClient: scripts split right, parameters as node-postgres
 * sends them, results and errors as node-postgres returns them, scripts atomic.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createRequire } from "node:module"
import { getConstructionPlans } from "pg-boss"
import { makePgBossDb, prepareValue } from "../../src/layers/jobs/PgBossDb.ts"
import { planScript, splitStatements } from "../../src/layers/jobs/SqlScript.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"

const nodePg = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue: (value: unknown) => unknown }

describe("splitStatements", () => {
  it("splits on top-level semicolons only", () => {
    assert.deepStrictEqual(splitStatements("SELECT 1; SELECT 2;"), ["SELECT 1", "SELECT 2"])
    assert.deepStrictEqual(splitStatements("SELECT 'a;b', \"c;d\" FROM t; SELECT E'x\\';y'"), [
      "SELECT 'a;b', \"c;d\" FROM t",
      "SELECT E'x\\';y'"
    ])
    assert.deepStrictEqual(splitStatements("SELECT 'it''s;'; SELECT 2"), ["SELECT 'it''s;'", "SELECT 2"])
    assert.deepStrictEqual(
      splitStatements("CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END; $$ LANGUAGE plpgsql; SELECT $1"),
      ["CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END; $$ LANGUAGE plpgsql", "SELECT $1"]
    )
    assert.deepStrictEqual(splitStatements("EXECUTE format($cmd$ a; $x$ b; $cmd$); SELECT 1"), [
      "EXECUTE format($cmd$ a; $x$ b; $cmd$)",
      "SELECT 1"
    ])
    assert.deepStrictEqual(splitStatements("-- a; comment\nSELECT 1 /* b; /* nested; */ c; */; ; \n -- only a comment;\n"), [
      "-- a; comment\nSELECT 1 /* b; /* nested; */ c; */"
    ])
  })

  it("plans a script as one statement, or as one transaction", () => {
    assert.deepStrictEqual(planScript("SELECT 1"), { _tag: "Single", statement: "SELECT 1" })
    assert.deepStrictEqual(planScript(" BEGIN; SET LOCAL x = 1; SELECT 2; COMMIT; "), {
      _tag: "Transaction",
      statements: ["SET LOCAL x = 1", "SELECT 2"]
    })
    assert.deepStrictEqual(planScript("SELECT 1; SELECT 2"), { _tag: "Transaction", statements: ["SELECT 1", "SELECT 2"] })
    assert.strictEqual(planScript("BEGIN; SELECT 1")._tag, "Unsupported")
  })

  it("plans a text once (pg-boss sends the same texts every second), and plans right past the cache's bound", () => {
    const text = "SELECT 1; SELECT 2"
    assert.strictEqual(planScript(text), planScript(text), "the same plan, not a second split")
    // 300 distinct texts: past the bound the cache starts over; every plan is still the text's own.
    for (let i = 0; i < 300; i++) {
      assert.deepStrictEqual(planScript(`SELECT ${i}; SELECT ${i + 1}`), { _tag: "Transaction", statements: [`SELECT ${i}`, `SELECT ${i + 1}`] })
    }
    assert.deepStrictEqual(planScript(text), { _tag: "Transaction", statements: ["SELECT 1", "SELECT 2"] })
    assert.deepStrictEqual(planScript("SELECT ';'"), { _tag: "Single", statement: "SELECT ';'" })
  })

  it("splits pg-boss's own schema script into whole statements", () => {
    const plan = planScript(getConstructionPlans("pgboss_split"))
    assert.strictEqual(plan._tag, "Transaction")
    if (plan._tag !== "Transaction") return
    assert.isAbove(plan.statements.length, 20)
    for (const statement of plan.statements) {
      assert.match(statement, /^(CREATE|ALTER|SET|SELECT|INSERT|COMMENT|DO|UPDATE|DROP)\b/, statement.slice(0, 60))
      assert.strictEqual((statement.match(/\$\$/g) ?? []).length % 2, 0, statement.slice(0, 60))
    }
  })
})

describe("prepareValue", () => {
  it("sends what node-postgres sends", () => {
    const values: Array<unknown> = [
      null, undefined, "text", 42, 1.5, -0, true, false, 12345678901234567890n,
      new Date("2024-03-01T12:34:56.789Z"), new Date(-62198755200000),
      ["a", "b\"c", "d\\e", null, 3], [[1, 2], [3, 4]], [],
      { a: 1, b: [1, "x"], c: null }, [{ a: 1 }],
      { toPostgres: () => "custom" }
    ]
    for (const value of values) assert.deepStrictEqual(prepareValue(value), nodePg.prepareValue(value), String(value))
    const bytes = new Uint8Array([1, 2, 255])
    assert.deepStrictEqual(Buffer.from(prepareValue(bytes) as Uint8Array), nodePg.prepareValue(bytes))
    assert.deepStrictEqual(prepareValue([bytes]), nodePg.prepareValue([bytes]))
  })
})

for (const kind of dbKinds) {
  layer(rawDb(kind), { excludeTestServices: true })(`pg-boss's db adapter on ${kind}`, (it) => {
    it.effect("reads and writes like node-postgres", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const db = makePgBossDb((yield* Effect.context<SqlClient.SqlClient>()))
        yield* Effect.promise(() =>
          db.executeSql(`CREATE TABLE adapter_t (id uuid PRIMARY KEY, n int8, data jsonb, at timestamptz, tags text[])`)
        )
        const ids = ["7d2a3b7e-0d6f-4c4e-9a53-2c7a1f0e9b11", "0b9f3c52-5e0a-4d0b-8d6a-3f1c2b4a5e66"]
        const at = new Date("2024-03-01T12:34:56.789Z")
        yield* Effect.promise(() =>
          db.executeSql(`INSERT INTO adapter_t SELECT unnest($1::uuid[]), 9007199254740993, $2, $3, $4`, [ids, { a: [1] }, at, ["x", "y"]])
        )
        const { rows } = yield* Effect.promise(() =>
          db.executeSql(`SELECT id, n, data, at, tags, count(*) OVER () AS total FROM adapter_t WHERE id = ANY($1) ORDER BY id`, [ids])
        )
        assert.deepStrictEqual(rows.map((r) => r.id), [...ids].sort())
        assert.deepStrictEqual(rows[0], { id: ids[1], n: "9007199254740993", data: { a: [1] }, at, tags: ["x", "y"], total: "2" })
        // Errors carry the server's fields, as pg-boss reads them.
        const error = yield* Effect.promise(() =>
          db.executeSql(`INSERT INTO adapter_t (id) VALUES ($1)`, [ids[0]]).then((): { code?: string; constraint?: string } => ({}), (e) => e)
        )
        assert.strictEqual(error.code, "23505")
        assert.strictEqual(error.constraint, "adapter_t_pkey")
        // A script is one transaction: all of it or nothing, its rows returned together.
        const script = yield* Effect.promise(() =>
          db.executeSql(`BEGIN; SET LOCAL lock_timeout = 1000; DELETE FROM adapter_t WHERE id = '${ids[0]}' RETURNING id; SELECT 1 AS one; COMMIT;`)
        )
        assert.deepStrictEqual(script.rows, [{ id: ids[0] }, { one: 1 }])
        const failed = yield* Effect.promise(() =>
          db.executeSql(`BEGIN; DELETE FROM adapter_t; SELECT 1/0; COMMIT;`).then((): { code?: string } => ({}), (e) => e)
        )
        assert.strictEqual(failed.code, "22012")
        const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM adapter_t`
        assert.strictEqual(left!.n, 1)
      }))
  })
}
