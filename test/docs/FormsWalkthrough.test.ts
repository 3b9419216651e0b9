/**
 * docs/forms-walkthrough.md, run the way a newcomer runs it: every ```sh block in order, pasted into
 * one bash session against a fresh gateway (the production bundle in sandbox mode, embedded database,
 * a free port). Only the `GATEWAY=` line is changed. Each `# →` comment is checked against what its
 * command printed (`…` stands for anything). Needs `jq`, as the walkthrough says.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ROOT } from "../process/SpawnFixtures.ts"
import { blockSteps, shBlocks } from "./ReadmeWalkthroughFixtures.ts"
import { runWalkthrough, walkthroughGateway } from "./WalkthroughRun.ts"

const gw = walkthroughGateway("forms-walkthrough-test")

describe("the forms walkthrough (docs/forms-walkthrough.md)", () => {
  it("runs as pasted and answers what it shows", async () => {
    // The walkthrough asks for jq; CI's machine has it (Debian's), and so must a newcomer's.
    assert.doesNotThrow(() => execFileSync("jq", ["--version"]), "jq is installed")
    const steps = shBlocks(readFileSync(join(ROOT, "docs/forms-walkthrough.md"), "utf8")).flatMap(blockSteps)
    await runWalkthrough(steps, { GATEWAY: gw.url }, { source: "walkthrough", minShown: 15 })
  }, 200_000)
})
