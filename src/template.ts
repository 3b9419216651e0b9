/** `node dist/embedded-template.mjs <file>`: writes the migrated embedded database (scripts/build.mjs). */
import { renameSync, writeFileSync } from "node:fs"
import { buildMigratedTemplate } from "./layers/infra/EmbeddedTemplate.ts"

const file = process.argv[2]
if (file === undefined) {
  process.stderr.write("usage: embedded-template <file>\n")
  process.exit(2)
}
const bytes = await buildMigratedTemplate()
// Written aside and renamed: a start never reads half a file.
const partial = `${file}.${process.pid}.partial`
writeFileSync(partial, bytes)
renameSync(partial, file)
