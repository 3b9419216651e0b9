/**
 * What the current schema holds, as sorted lines that two databases can be compared by: tables and
 * their columns, constraints, indexes, sequences, views, triggers and routines (with their full
 * definitions), the schema's name left out so two schemas compare equal.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const catalogSnapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ line: string }>`
    SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable
           || ' default=' || coalesce(column_default, '') AS line
      FROM information_schema.columns WHERE table_schema = current_schema()
    UNION ALL
    SELECT 'constraint ' || c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = current_schema()
    UNION ALL
    SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
    UNION ALL
    SELECT 'sequence ' || sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema()
    UNION ALL
    SELECT 'view ' || table_name || ' ' || view_definition FROM information_schema.views WHERE table_schema = current_schema()
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid
      JOIN pg_namespace n ON n.oid = r.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal
    UNION ALL
    SELECT 'routine ' || pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema()
    ORDER BY 1`
  const schema = (yield* sql<{ s: string }>`SELECT current_schema() AS s`)[0]!.s
  return rows.map((r) => r.line.split(`${schema}.`).join(""))
})
