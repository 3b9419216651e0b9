// Bundles the audit code that ships (src/layers/audit/AuditLogSql.ts, AuditBuckets.ts, migrations 0001 and 0004) into one
// temporary ESM file, so the bench runs exactly the production SQL on Node 20 (which cannot load .ts).
import { build } from "esbuild"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

export const loadAudit = async () => {
  const entry = `
    export { AuditLog } from "./src/services/audit/AuditLog.ts"
    export { AuditLogSql } from "./src/layers/audit/AuditLogSql.ts"
    export { default as migration0001 } from "./src/layers/migrations/0001_initial.ts"
    export { default as migration0004 } from "./src/layers/migrations/0004_audit.ts"
    export { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS } from "./src/layers/audit/AuditBuckets.ts"
    export { PgClient } from "@effect/sql-pg"
    export { Effect, Layer, Redacted } from "effect"
    export { Reactivity } from "effect/reactivity"
    export { SqlClient } from "effect/sql"
  `
  const out = await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: "audit-bench-entry.ts", loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "warning",
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
  })
  const file = join(mkdtempSync(join(tmpdir(), "audit-bench-")), "audit.mjs")
  writeFileSync(file, out.outputFiles[0].text)
  return import(pathToFileURL(file).href)
}

export const BENCH_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
export const SCHEMA = "bench_audit"
export const TARGET_SERVER = "900000000000000001"
export const TARGET_BOT = "800000000000000001"
