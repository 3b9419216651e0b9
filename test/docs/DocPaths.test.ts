/**
 * The documentation points only at what exists: every relative link of the README and docs/ (and
 * the other READMEs a newcomer meets) resolves to a file, its `#anchor` to a heading there; every
 * repository path written in code spans (`src/…`, `test/…`, `layers/…/X.ts`) names a file or folder
 * of the tree, read from the root or, for the short forms the docs use, from src/.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "../..")
const DOCS = [
  "README.md",
  "CHANGELOG.md",
  "bench/README.md",
  "packages/client/README.md",
  "test/contracts/README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)
]

/** GitHub's heading anchors: lower case, punctuation dropped (but `-` and `_`), spaces as `-`. */
const anchors = (markdown: string) =>
  new Set([...markdown.replace(/^```[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
    m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")
  ))

const read = (path: string) => readFileSync(join(ROOT, path), "utf8")
const withoutCode = (markdown: string) => markdown.replace(/^```[\s\S]*?^```$/gm, "")

describe("documentation paths", () => {
  it("every relative link resolves, anchors included", () => {
    const broken: Array<string> = []
    for (const doc of DOCS) {
      const text = read(doc)
      for (const [, target] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [file, anchor] = target!.split("#") as [string, string | undefined]
        const path = file === "" ? join(ROOT, doc) : resolve(ROOT, dirname(doc), file)
        if (!existsSync(path)) broken.push(`${doc}: ${target} (no such file)`)
        else if (anchor !== undefined && path.endsWith(".md") && !anchors(readFileSync(path, "utf8")).has(anchor)) {
          broken.push(`${doc}: ${target} (no such heading)`)
        }
      }
    }
    assert.deepStrictEqual(broken, [])
  })

  it("every repository path in a code span exists", () => {
    const missing: Array<string> = []
    const tops = /^(?:src|test|docs|bench|scripts|packages|layers|services|http|domain|sandbox|panel)\//
    for (const doc of DOCS) {
      for (const [, span] of withoutCode(read(doc)).matchAll(/`([^`\s]+)`/g)) {
        const path = span!.replace(/[.,:;]$/, "")
        if (!tops.test(path) || /[<>{}*…]/.test(path)) continue
        if (!/\.(?:ts|mjs|cjs|js|md|json|sql|png|yaml)$/.test(path) && !path.endsWith("/")) continue
        if (![ROOT, join(ROOT, "src")].some((base) => existsSync(join(base, path)))) missing.push(`${doc}: ${path}`)
      }
    }
    assert.deepStrictEqual(missing, [])
  })
})
