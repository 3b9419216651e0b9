/** `node dist/template.mjs <folder>`: writes the migrated embedded database there (scripts/build.mjs). */
import { buildMigratedTemplate } from "./layers/infra/EmbeddedTemplate.ts"

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write("usage: template <folder>\n")
  process.exit(2)
}
await buildMigratedTemplate(dir)
