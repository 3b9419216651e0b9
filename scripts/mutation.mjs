// `npm run mutation [-- <file>…] [--concurrency N] [--incremental]`: Stryker over the files of stryker.config.mjs,
// one run a file with only that file's test files; one score line a file, then the minimum.
// Reports, and each file's surviving mutants, go to reports/mutation/ (git-ignored).
const [major] = process.versions.node.split(".").map(Number)
if (major < 22) {
  console.error(`npm run mutation needs Node >= 22 (Stryker 10); this is Node ${process.versions.node}. Put Node 22+ first on PATH.`)
  process.exit(1)
}

const fs = await import("node:fs")
const path = await import("node:path")
const root = path.resolve(import.meta.dirname, "..")
process.chdir(root)
const { default: base, targets } = await import("../stryker.config.mjs")

const fail = (message) => {
  console.error(`npm run mutation: ${message}`)
  process.exit(1)
}

// Arguments: files (as in `targets`, or one of a glob's matches) and --concurrency N.
const args = process.argv.slice(2)
const wanted = []
let concurrency = base.concurrency
// --incremental: reuse the last run's results of this file for mutants and tests that did not change
// (reports/mutation/<name>.incremental.json); a re-run after killing a few survivors takes minutes.
let incremental = false
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--incremental") incremental = true
  else if (args[i] === "--concurrency") concurrency = Number(args[++i])
  else if (args[i].startsWith("--concurrency=")) concurrency = Number(args[i].slice("--concurrency=".length))
  else wanted.push(path.relative(root, path.resolve(args[i])).replaceAll("\\", "/"))
}
if (!Number.isInteger(concurrency) || concurrency < 1) fail("--concurrency wants a whole number >= 1")

// Expand the globs: each file is its own run. "file.ts:24-90" keeps its line range; "file.ts:A..B"
// is the lines from the declaration of A to the last declaration of B (line numbers move, names less).
const declared = (lines, name) =>
  lines.flatMap((l, i) => new RegExp(`^export (const|type|interface|class|function) ${name}\\b`).test(l) ? [i + 1] : [])
const runs = []
for (const [key, testFiles] of Object.entries(targets)) {
  const [, pattern, range = ""] = /^(.*?)((?::\d+(?::\d+)?-\d+(?::\d+)?|:\w+\.\.\w+)?)$/.exec(key)
  const files = fs.globSync(pattern).map((f) => f.replaceAll("\\", "/")).sort()
  if (files.length === 0) fail(`${key} in stryker.config.mjs matches no file (moved?)`)
  for (const file of files) {
    for (const t of testFiles) if (!fs.existsSync(t)) fail(`${t} (tests of ${key}) does not exist (moved?)`)
    let lines = range
    const names = /^:(\w+)\.\.(\w+)$/.exec(range)
    if (names) {
      const source = fs.readFileSync(file, "utf8").split("\n")
      const from = declared(source, names[1])[0]
      const last = declared(source, names[2]).at(-1)
      if (from === undefined || last === undefined || last < from) fail(`${key}: no exported ${names[1]} before ${names[2]} in ${file}`)
      // To the end of B's declaration: the line before the next top-level statement or comment.
      let to = source.length
      for (let i = last; i < source.length; i++) {
        if (/^(export |import |const |let |function |class |type |interface |\/\*\*|\/\/)/.test(source[i])) {
          to = i
          break
        }
      }
      while (to > last && source[to - 1].trim() === "") to--
      lines = `:${from}-${to}`
    }
    runs.push({ file, key: file + range, spec: file + lines, testFiles })
  }
}
for (const run of runs) {
  const short = path.basename(run.file, path.extname(run.file))
  run.name = runs.filter((r) => r.file !== run.file && path.basename(r.file, path.extname(r.file)) === short).length === 0
    ? short
    : run.file.replace(/^src\//, "").replace(/\.[^.]+$/, "").replaceAll("/", "-")
}
let selected = runs
if (wanted.length > 0) {
  selected = wanted.map((w) => {
    const run = runs.find((r) => r.file === w || r.key === w || r.spec === w)
    if (!run) fail(`${w} is not in the configured set; add it to \`targets\` in stryker.config.mjs`)
    return run
  })
}

// Every mutant starts a fresh vitest worker that loads Effect again: Node's compile cache halves that.
process.env["NODE_COMPILE_CACHE"] ??= path.join(root, "node_modules", ".cache", "mutation-compile-cache")
const { Stryker } = await import("@stryker-mutator/core")
const outDir = path.join(root, "reports", "mutation")
fs.mkdirSync(outDir, { recursive: true })
const summaryFile = path.join(outDir, "summary.txt")
const detectedStates = new Set(["Killed", "Timeout"])
const undetectedStates = new Set(["Survived", "NoCoverage"])
const width = Math.max(...selected.map((r) => r.spec.length))
const scores = []
let failed = false

for (const run of selected) {
  const started = Date.now()
  const source = fs.readFileSync(run.file, "utf8").split("\n")
  process.env["MUTATION_TEST_FILES"] = run.testFiles.join(",")
  let results
  try {
    results = await new Stryker({
      ...base,
      concurrency,
      incremental,
      // Two runs at once in one checkout need their own sandboxes: MUTATION_TEMP_DIR=.stryker-tmp-b.
      tempDirName: process.env["MUTATION_TEMP_DIR"] ?? base.tempDirName,
      incrementalFile: `reports/mutation/${run.name}.incremental.json`,
      mutate: [run.spec],
      reporters: process.stdout.isTTY ? ["html", "json", "progress"] : ["html", "json"],
      htmlReporter: { fileName: `reports/mutation/${run.name}.html` },
      jsonReporter: { fileName: `reports/mutation/${run.name}.json` }
    }).runMutationTest()
  } catch (error) {
    failed = true
    const line = `${run.spec.padEnd(width)}  error: ${String(error?.message ?? error).split("\n")[0]}`
    console.log(line)
    fs.appendFileSync(summaryFile, `${new Date().toISOString()} ${line}\n`)
    continue
  }
  if (results.length === 0) {
    failed = true
    const line = `${run.spec.padEnd(width)}  error: no mutant (a line range that is not "file:from-to"?)`
    console.log(line)
    fs.appendFileSync(summaryFile, `${new Date().toISOString()} ${line}\n`)
    continue
  }
  const count = (states) => results.filter((m) => states.has(m.status)).length
  const by = (status) => results.filter((m) => m.status === status).length
  const detected = count(detectedStates)
  const undetected = count(undetectedStates)
  const score = detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected)
  const seconds = Math.round((Date.now() - started) / 1000)
  const line = `${run.spec.padEnd(width)}  ${score.toFixed(1).padStart(5)} %  ` +
    `(killed ${by("Killed")}, timeout ${by("Timeout")}, survived ${by("Survived")}, no coverage ${by("NoCoverage")}, ` +
    `ignored ${by("Ignored")}, errors ${by("RuntimeError") + by("CompileError")}; ${seconds} s)`
  console.log(line)
  fs.appendFileSync(summaryFile, `${new Date().toISOString()} ${line}\n`)
  // A runner that cannot select vitest's tests kills nothing: every mutant "survives". Never trust that.
  if (detected === 0 && undetected > 0) {
    failed = true
    console.log(`${"".padEnd(width)}  warning: no mutant was killed; check that a known-bad mutant is killed (README)`)
  }
  scores.push(score)

  // Survivors, one a line: file:line:column, mutator, status, original → replacement.
  const survivors = results
    .filter((m) => undetectedStates.has(m.status))
    .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)
    .map((m) => {
      const { start, end } = m.location
      const original = start.line === end.line
        ? source[start.line - 1].slice(start.column - 1, end.column - 1)
        : source[start.line - 1].slice(start.column - 1) + " …"
      const oneLine = (s) => s.replace(/\s+/g, " ").trim().slice(0, 100)
      return `${run.file}:${start.line}:${start.column}  ${m.mutatorName}  ${m.status}  ${oneLine(original)}  →  ${oneLine(m.replacement ?? "")}`
    })
  fs.writeFileSync(path.join(outDir, `${run.name}.survivors.txt`), survivors.join("\n") + (survivors.length ? "\n" : ""))
}

if (scores.length > 0) console.log(`mutation score: min ${Math.min(...scores).toFixed(1)} % over ${scores.length} files`)
process.exit(failed ? 1 : 0)
