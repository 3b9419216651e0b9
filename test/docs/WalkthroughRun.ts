/**
 * What both walkthrough tests do (ReadmeWalkthroughs, FormsWalkthrough): a fresh gateway for the
 * file (the production bundle in sandbox mode, embedded database, a free port), and the steps pasted
 * into one bash session with some of their assignment lines replaced, each `# →` checked against
 * what its command printed.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { join } from "node:path"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { cleanEnv, ROOT, sharedBundle, waitReady } from "../process/SpawnFixtures.ts"
import type { Step } from "./ReadmeWalkthroughFixtures.ts"
import { matchesShown, runBash } from "./ReadmeWalkthroughFixtures.ts"

/** Starts the file's gateway before its tests and stops it after; `url` is set once it is ready. */
export const walkthroughGateway = (userAgent: string) => {
  const processes = childProcesses()
  const gateway = { url: "", headers: { "user-agent": userAgent } }
  beforeAll(async () => {
    const out = await sharedBundle()
    const port = await freePort()
    gateway.url = `http://127.0.0.1:${port}`
    const server = processes.spawn(process.execPath, [join(out, "main.mjs")], { cwd: ROOT, env: cleanEnv({ PORT: String(port) }) })
    await waitReady(gateway.url, server, 90_000, gateway.headers)
  }, 300_000)
  afterAll(() => processes.cleanUp(), 30_000)
  return gateway
}

/**
 * Runs `steps` in one bash session, each `NAME=` line of `replace` replaced by `NAME=<value>` (each
 * exactly once), and asserts every command ran and printed what its `# →` shows (at least `minShown` of them).
 */
export const runWalkthrough = async (
  steps: ReadonlyArray<Step>,
  replace: Readonly<Record<string, string>>,
  o: { readonly source: string; readonly minShown: number }
) => {
  const substituted = Object.fromEntries(Object.keys(replace).map((name) => [name, 0]))
  const script = steps.map((step, i) => {
    let command = step.command
    for (const [name, value] of Object.entries(replace)) {
      const line = new RegExp(`^${name}=.*$`, "m")
      if (line.test(command)) (substituted[name]!++, command = command.replace(line, `${name}=${value}`))
    }
    return `printf '\\n@@step ${i}\\n'\n${command}`
  }).join("\n") + "\nprintf '\\n@@step end\\n'\n"
  assert.deepStrictEqual(substituted, Object.fromEntries(Object.keys(replace).map((name) => [name, 1])), `exactly the ${Object.keys(replace).join("= and ")}= lines are replaced`)
  const { all, code: exit, outputs } = await runBash(script, 100_000, ROOT)
  assert.isTrue(all.includes("\n@@step end\n"), `every command ran to the end (exit ${exit}):\n${all}`)
  const checked = steps.flatMap((step, i) => step.shown === undefined ? [] : [{ step, output: (outputs.get(i) ?? "").trim() }])
  assert.isAtLeast(checked.length, o.minShown, "the walkthrough shows what its commands answer")
  const wrong = checked.filter(({ output, step }) => !matchesShown(step.shown!, output))
    .map(({ output, step }) => `${o.source}: ${step.command}\nshows:   ${step.shown}\nprinted: ${output}`)
  assert.deepStrictEqual(wrong, [], wrong.join("\n\n"))
}
