/**
 * The operator CLI as an operator runs it (the bundled `cli.mjs`): `bots add` reads the bot's
 * identity from the chat platform (the sandbox of a running gateway), `bots list`, `bots remove`,
 * `taskboard pair`/`unpair`, `keys reencrypt`, against its own embedded database.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { promisify } from "node:util"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { BOT2_ID, BOT2_TOKEN, S2_ID } from "../../src/sandbox/Seed.ts"
import { TestApp } from "../utils/TestApp.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const OUT = join(ROOT, ".build-test", "cli")

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 120_000 })("cli", (it) => {
  it.effect("adds, lists and removes a bot; pairs a task board; re-encrypts", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, env: { ...process.env, BUILD_OUTDIR: OUT } })
      const dataDir = mkdtempSync(join(tmpdir(), "gateway-cli-"))
      const key = "k1:" + Buffer.alloc(32, 7).toString("base64")
      // Asynchronous: the sandbox the CLI calls is served by this very process.
      const run = (...args: Array<string>) =>
        Effect.promise(() =>
          promisify(execFile)(process.execPath, [join(OUT, "cli.mjs"), ...args], {
            cwd: ROOT,
            env: { ...process.env, DATA_DIR: dataDir, PUBLIC_URL: app.url, TOKEN_ENCRYPTION_KEY: key, LOG_LEVEL: "Error" },
            encoding: "utf8",
            timeout: 60_000
          }).then((r) => ({ ok: true as const, out: r.stdout }), (e: { stdout?: string }) => ({ ok: false as const, out: e.stdout ?? "" }))
        )
      const cli = (...args: Array<string>) =>
        Effect.map(run(...args), (r) => {
          assert.isTrue(r.ok, `${args.join(" ")} failed: ${r.out}`)
          return r.out
        })
      try {
        assert.include(yield* cli("bots", "add", "--token", BOT2_TOKEN), `added bot ${BOT2_ID}`)
        assert.match(yield* cli("bots", "list"), new RegExp(`^${BOT2_ID}\\tFeedsBot$`, "m"))
        assert.include(yield* cli("taskboard", "pair", S2_ID, "--team", "team-x", "--key", "k", "--token", "t"), "paired")
        assert.include(yield* cli("keys", "reencrypt"), "re-encrypted 0 secrets")
        assert.include(yield* cli("taskboard", "unpair", S2_ID), "unpaired")
        assert.include(yield* cli("bots", "remove", BOT2_ID), `removed bot ${BOT2_ID}`)
        assert.notInclude(yield* cli("bots", "list"), BOT2_ID)
        // A token the platform refuses is not registered.
        assert.isFalse((yield* run("bots", "add", "--token", "not-a-bot-token")).ok)
        assert.notInclude(yield* cli("bots", "list"), "not-a-bot")
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }))
})
