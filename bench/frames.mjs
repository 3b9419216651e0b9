// What the profile summaries share (profile-summary.mjs: CPU; alloc-summary.mjs: allocations): a
// frame's label, mapped back to its source through the bundle's source map, and the three tables.
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

const maps = new Map()
const mapOf = (url) => {
  if (!maps.has(url)) {
    let map
    try {
      const file = url.startsWith("file:") ? fileURLToPath(url) : url
      if (existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")))
    } catch {}
    maps.set(url, map)
  }
  return maps.get(url)
}

/** `name file:line` of a V8 call frame, in the original source when the bundle has a source map. */
export const frameLabel = (f) => {
  const entry = f.lineNumber >= 0 ? mapOf(f.url)?.findEntry(f.lineNumber, f.columnNumber) : undefined
  if (entry?.originalSource) {
    const src = entry.originalSource.replace(/^.*\/(node_modules\/|src\/)/, "$1")
    return `${f.functionName || "(anon)"} ${src}:${entry.originalLine + 1}`
  }
  const url = f.url.replace(/^.*\/(node_modules\/|dist\/|src\/)/, "$1")
  return `${f.functionName || "(anon)"} ${url}:${f.lineNumber + 1}`
}

/**
 * The tables: the top `top` labels by self, those matching `filter` by inclusive amount, and self
 * per source file; `show` formats an amount.
 */
export const printTables = ({ self, incl, top, filter, show }) => {
  const byAmount = (entries) => [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)
  console.log("\n-- self --")
  for (const [k, v] of byAmount(self)) console.log(show(v), k)
  if (filter !== undefined) {
    console.log(`\n-- inclusive, matching /${filter}/ --`)
    const re = new RegExp(filter)
    for (const [k, v] of byAmount([...incl].filter(([k]) => re.test(k)))) console.log(show(v), k)
  }
  const perFile = new Map()
  for (const [k, v] of self) {
    const f = k.split(" ").slice(1).join(" ").replace(/:\d+$/, "")
    perFile.set(f, (perFile.get(f) ?? 0) + v)
  }
  console.log("\n-- self per file --")
  for (const [k, v] of byAmount(perFile)) console.log(show(v), k)
}
