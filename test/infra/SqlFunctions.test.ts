import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dbKinds, testDb } from "../utils/Db.ts"
import { keptFunctions, normaliseDefinition, parseKeptFunctions } from "../utils/KeptFunctions.ts"

/** Every function and procedure of the migrated schema, as the database defines it now. */
const databaseFunctions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ name: string; schema: string; definition: string }>`
    SELECT p.proname AS name, n.nspname AS schema, pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = current_schema() ORDER BY p.proname, p.oid`
  return rows.map((r) => {
    const definition = normaliseDefinition(r.definition, r.schema)
    return { name: r.name, header: definition.split("\n")[0]!, definition }
  })
})

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true })(`database functions beside their callers, on ${kind}`, (it) => {
    it.effect("every function after the migrations has exactly one kept definition, equal to the database's", () =>
      Effect.gen(function*() {
        const database = yield* databaseFunctions
        const kept = keptFunctions()
        assert.isAbove(database.length, 20)
        for (const fn of database) {
          const matches = kept.filter((k) => k.header === fn.header)
          assert.strictEqual(matches.length, 1,
            `${fn.name}: ${matches.length} kept definitions (${matches.map((m) => m.file).join(", ") || "none"}); ` +
              `keep this one beside its caller (src/layers/<feature>/<Repo>.functions.sql):\n${fn.definition};`)
          assert.strictEqual(matches[0]!.definition, fn.definition,
            `${fn.name} in ${matches[0]!.file} differs from the database's; a change goes in a migration, and the database has:\n${fn.definition};`)
        }
        // No definition of a function the migrations do not create (or of an old signature).
        const extra = kept.filter((k) => !database.some((fn) => fn.header === k.header))
        assert.deepStrictEqual(extra.map((k) => `${k.file}: ${k.header}`), [])
      }))
  })
}

describe("kept function files", () => {
  it("read each definition up to its ';', the comments before it excluded", () => {
    const parsed = parseKeptFunctions(
      [
        "-- header",
        "",
        "-- f: a note",
        "CREATE OR REPLACE FUNCTION f()",
        " RETURNS int",
        " LANGUAGE sql",
        "AS $function$ SELECT 1 $function$;   ",
        "",
        "-- g",
        "CREATE OR REPLACE PROCEDURE g()",
        " LANGUAGE plpgsql",
        "AS $procedure$",
        "BEGIN",
        "  -- inside the body",
        "END $procedure$;",
        ""
      ].join("\n"),
      "x.sql"
    )
    assert.deepStrictEqual(parsed.map((p) => [p.name, p.definition]), [
      ["f", "CREATE OR REPLACE FUNCTION f()\n RETURNS int\n LANGUAGE sql\nAS $function$ SELECT 1 $function$"],
      ["g", "CREATE OR REPLACE PROCEDURE g()\n LANGUAGE plpgsql\nAS $procedure$\nBEGIN\n  -- inside the body\nEND $procedure$"]
    ])
  })

  it("refuse stray text and a definition without its ';'", () => {
    assert.throws(() => parseKeptFunctions("SELECT 1;\n", "x.sql"), /x.sql:1: not a comment nor a definition/)
    assert.throws(() => parseKeptFunctions("CREATE OR REPLACE FUNCTION f()\n RETURNS int\n", "x.sql"), /f does not end with ";"/)
  })

  it("compare a database definition without its schema qualifier, only that schema's", () => {
    assert.strictEqual(normaliseDefinition("CREATE OR REPLACE FUNCTION t_ab.f(x int)\n RETURNS int  \n", "t_ab"), "CREATE OR REPLACE FUNCTION f(x int)\n RETURNS int")
    assert.strictEqual(normaliseDefinition("CREATE OR REPLACE FUNCTION other.f()", "t_ab"), "CREATE OR REPLACE FUNCTION other.f()")
  })
})
