/**
 * The database functions' definitions kept beside their callers (src/layers/<feature>/*.functions.sql):
 * each file holds `CREATE OR REPLACE FUNCTION|PROCEDURE` statements as pg_get_functiondef writes them,
 * each ended by `;`, with `--` comment lines before them.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

export interface KeptFunction {
  /** The header line, e.g. `CREATE OR REPLACE FUNCTION forms_read(p_id bigint, …)`: one per function (and overload). */
  readonly header: string
  readonly name: string
  readonly file: string
  readonly definition: string
}

const ROOT = resolve(import.meta.dirname, "../..")
const START = /^CREATE OR REPLACE (FUNCTION|PROCEDURE) /

/** The definition as compared: no schema qualifier on the name, no trailing blanks, no final `;`. */
export const normaliseDefinition = (text: string, schema?: string): string => {
  const lines = text.replace(/\r\n/g, "\n").split("\n").map((l) => l.trimEnd())
  if (schema !== undefined && lines[0] !== undefined) {
    lines[0] = lines[0].replace(/^(CREATE OR REPLACE (?:FUNCTION|PROCEDURE) )("?[^".(]+"?)\./, (all, head: string, qualifier: string) =>
      qualifier.replaceAll("\"", "") === schema ? head : all)
  }
  return lines.join("\n").trim().replace(/;$/, "").trimEnd()
}

const nameOf = (header: string) => header.replace(START, "").replace(/\(.*$/, "")

/** Parses one file's text; `file` is only for messages. Text that is neither a comment nor a definition is an error. */
export const parseKeptFunctions = (text: string, file: string): ReadonlyArray<KeptFunction> => {
  const lines = text.replace(/\r\n/g, "\n").split("\n")
  const out: Array<KeptFunction> = []
  let current: Array<string> | undefined
  const flush = () => {
    if (current === undefined) return
    // The comment and blank lines at a chunk's end belong to the next definition.
    while (current.length > 0 && (current.at(-1)!.trim() === "" || current.at(-1)!.startsWith("--"))) current.pop()
    const definition = normaliseDefinition(current.join("\n"))
    if (!current.at(-1)!.trimEnd().endsWith(";")) throw new Error(`${file}: the definition of ${nameOf(current[0]!)} does not end with ";"`)
    out.push({ header: current[0]!.trimEnd(), name: nameOf(current[0]!), file, definition })
    current = undefined
  }
  for (const [i, line] of lines.entries()) {
    if (START.test(line)) {
      flush()
      current = [line]
    } else if (current !== undefined) current.push(line)
    else if (line.trim() !== "" && !line.startsWith("--")) throw new Error(`${file}:${i + 1}: not a comment nor a definition: ${line}`)
  }
  flush()
  return out
}

/** Every `*.functions.sql` under src/layers, parsed. */
export const keptFunctions = (): ReadonlyArray<KeptFunction> => {
  const base = join(ROOT, "src/layers")
  return readdirSync(base, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".functions.sql"))
    .sort()
    .flatMap((f) => parseKeptFunctions(readFileSync(join(base, f), "utf8"), relative(ROOT, join(base, f))))
}
