/** Reading the README's walkthroughs: the ```sh blocks of a section, cut into commands and what each is shown to answer. */

import { spawn } from "node:child_process"

export interface Step {
  /** One command as pasted (continuation lines joined by their backslash-newlines, kept as written). */
  readonly command: string
  /** The `# →` comment after it (continuation comment lines joined), if any. */
  readonly shown?: string
}

/** The text of the `## <heading>` section, up to the next `## `. */
export const section = (markdown: string, heading: string): string => {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`no section "## ${heading}"`)
  const end = markdown.indexOf("\n## ", start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

export const shBlocks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)

/** Whether a quote is still open at the end (the command goes on on the next line, as bash reads it). */
const inQuote = (text: string): boolean => {
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
    } else if (c === "\\") {
      i++
    } else if (quote === "\"") {
      if (c === "\"") quote = undefined
    } else if (c === "'" || c === "\"") {
      quote = c
    }
  }
  return quote !== undefined
}

/** Commands in order, each with the `# →` lines that follow it. */
export const blockSteps = (block: string): ReadonlyArray<Step> => {
  const steps: Array<{ command: string; shown?: string }> = []
  const lines = block.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.startsWith("# → ")) {
      const last = steps.at(-1)
      if (last === undefined) throw new Error(`"${line}" follows no command`)
      let shown = line.slice(4).trim()
      while (lines[i + 1]?.startsWith("#  ") === true) shown += lines[++i]!.slice(1).trim()
      last.shown = shown
    } else if (line.trim() !== "" && !line.startsWith("#")) {
      let command = line
      // A function's body (`name() {` … `}`) is one command, as bash reads it.
      const body = /\(\)\s*\{\s*$/.test(line)
      while ((command.endsWith("\\") || inQuote(command) || (body && !/^\}\s*$/.test(command.split("\n").at(-1)!))) && i + 1 < lines.length) {
        command += `\n${lines[++i]!}`
      }
      steps.push({ command })
    }
  }
  return steps
}

/** Every command of the "Try it in the sandbox" section's blocks, in order. */
export const walkthroughSteps = (readme: string): ReadonlyArray<Step> =>
  shBlocks(section(readme, "Try it in the sandbox")).flatMap(blockSteps)

/**
 * Whether the output is what the README shows: the shown text's pieces between `…` appear in the
 * output in order (each trimmed); the first at the start and the last at the end unless `…` is there.
 */
export const matchesShown = (shown: string, output: string): boolean => {
  const pieces = shown.split("…").map((p) => p.trim())
  let at = 0
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!
    if (piece === "") continue
    const found = output.indexOf(piece, at)
    if (found < 0) return false
    if (i === 0 && found !== 0) return false
    at = found + piece.length
  }
  const last = pieces.at(-1)!
  return last === "" || output.endsWith(last)
}

/** Runs the script with bash; each step's output (stdout and stderr) by its marker. */
export const runBash = (script: string, timeoutMs: number, cwd: string) =>
  new Promise<{ outputs: Map<number, string>; all: string; code: number | null }>((resolve) => {
    const child = spawn("bash", ["-s"], { cwd, stdio: ["pipe", "pipe", "pipe"] })
    let all = ""
    child.stdout.setEncoding("utf8").on("data", (c: string) => all += c)
    child.stderr.setEncoding("utf8").on("data", (c: string) => all += c)
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      const outputs = new Map<number, string>()
      for (const part of all.split("\n@@step ").slice(1)) {
        const eol = part.indexOf("\n")
        outputs.set(Number(part.slice(0, eol)), part.slice(eol + 1))
      }
      resolve({ outputs, all, code })
    })
    child.stdin.end(script)
  })
