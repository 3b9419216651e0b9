/**
 * Saved PGlite data folders that test databases start from (PGlite's `dumpDataDir`, loaded with
 * `loadDataDir`): most of a fresh PGlite's start is its initdb, which loading a saved folder skips.
 * `empty` is the folder right after initdb (nothing created: raw databases, migration tests);
 * `migrated` is it after every migration and pg-boss's schema, before any row, so a suite's own
 * migration run, and its job engine's start, find everything in place. Each is built once per
 * worker (files share their worker's modules) and kept in this run's folder (test/setup/BuildOnce.ts), where the other worker, or every file when files
 * are isolated, reads it instead of building it again.
 */
import { PGlite } from "@electric-sql/pglite"
import { getConstructionPlans } from "pg-boss"
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { inject } from "vitest"
import { migrateOverSocket } from "../../src/layers/infra/EmbeddedTemplate.ts"
import { DEFAULT_SCHEMA } from "../../src/layers/jobs/JobEnginePgBoss.ts"

export type TemplateKind = "empty" | "migrated"

const ROOT = resolve(import.meta.dirname, "../..")

/** Where this run keeps its templates; without the global setup (another config), this process's own. */
const folder = () => {
  const dir = inject("pgliteTemplateDir") ?? join(ROOT, ".build-test", `run-${process.pid}.pglite`)
  mkdirSync(dir, { recursive: true })
  return dir
}

const build = async (kind: TemplateKind): Promise<Blob> => {
  const db = kind === "empty" ? new PGlite() : new PGlite({ loadDataDir: await template("empty") })
  try {
    await db.waitReady
    if (kind === "migrated") {
      await migrateOverSocket(db)
      // pg-boss's schema as the app's engine installs it at its start, which then finds it at its
      // version: ~0.35 s less for every app on PGlite.
      await db.exec(getConstructionPlans(DEFAULT_SCHEMA))
    }
    // Written out, a started copy has no WAL to replay.
    await db.exec("CHECKPOINT")
    return await db.dumpDataDir("none")
  } finally {
    await db.close()
  }
}

const load = async (kind: TemplateKind): Promise<Blob> => {
  const file = join(folder(), `${kind}.tar`)
  if (existsSync(file)) return new Blob([readFileSync(file)])
  const blob = await build(kind)
  // Written aside and renamed: a reader never sees half a file (two writers write the same).
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
  writeFileSync(partial, new Uint8Array(await blob.arrayBuffer()))
  renameSync(partial, file)
  return blob
}

const templates = new Map<TemplateKind, Promise<Blob>>()

/** The saved folder of `kind`; a failed build is not kept (the next caller tries again). */
export const template = (kind: TemplateKind): Promise<Blob> => {
  let blob = templates.get(kind)
  if (blob === undefined) {
    blob = load(kind)
    templates.set(kind, blob)
    blob.catch(() => templates.delete(kind))
  }
  return blob
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Where this run keeps its saved PGlite folders (test/utils/PgliteTemplate.ts). */
    pgliteTemplateDir: string
  }
}
