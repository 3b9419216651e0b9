/**
 * docs/forms-walkthrough.md, run the way a newcomer runs it: every ```sh block in order, pasted into
 * one bash session against a fresh gateway (the production bundle in sandbox mode, embedded database,
 * a free port). Only the `GATEWAY=` line is changed. Each `# →` comment is checked against what its
 * command printed (`…` stands for anything). Needs `jq`, as the walkthrough says.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../utils/TestApp.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { cleanEnv, ROOT, sharedBundle, waitReady } from "../process/SpawnFixtures.ts"
import { blockSteps, matchesShown, runBash, shBlocks } from "./ReadmeWalkthroughFixtures.ts"

const processes = childProcesses()
const UA = { "user-agent": "forms-walkthrough-test" }
let gateway = ""

beforeAll(async () => {
  const out = await sharedBundle()
  const port = await freePort()
  gateway = `http://127.0.0.1:${port}`
  const server = processes.spawn(process.execPath, [join(out, "main.mjs")], { cwd: ROOT, env: cleanEnv({ PORT: String(port) }) })
  await waitReady(gateway, server, 90_000, UA)
}, 300_000)
afterAll(() => processes.cleanUp(), 30_000)

describe("the forms walkthrough (docs/forms-walkthrough.md)", () => {
  it("runs as pasted and answers what it shows", async () => {
    // The walkthrough asks for jq; CI's machine has it (Debian's), and so must a newcomer's.
    assert.doesNotThrow(() => execFileSync("jq", ["--version"]), "jq is installed")
    const steps = shBlocks(readFileSync(join(ROOT, "docs/forms-walkthrough.md"), "utf8")).flatMap(blockSteps)
    let substituted = 0
    const script = steps.map((step, i) => {
      let command = step.command
      if (/^GATEWAY=/m.test(command)) (substituted++, command = command.replace(/^GATEWAY=.*$/m, `GATEWAY=${gateway}`))
      return `printf '\\n@@step ${i}\\n'\n${command}`
    }).join("\n") + "\nprintf '\\n@@step end\\n'\n"
    assert.strictEqual(substituted, 1, "exactly the GATEWAY= line is replaced")
    const { all, code: exit, outputs } = await runBash(script, 100_000, ROOT)
    assert.isTrue(all.includes("\n@@step end\n"), `every command ran to the end (exit ${exit}):\n${all}`)
    const checked = steps.flatMap((step, i) => step.shown === undefined ? [] : [{ step, output: (outputs.get(i) ?? "").trim() }])
    assert.isAtLeast(checked.length, 15, "the walkthrough shows what its commands answer")
    const wrong = checked.filter(({ output, step }) => !matchesShown(step.shown!, output))
      .map(({ output, step }) => `walkthrough: ${step.command}\nshows:   ${step.shown}\nprinted: ${output}`)
    assert.deepStrictEqual(wrong, [], wrong.join("\n\n"))
  }, 200_000)
})
