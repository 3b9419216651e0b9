/**
 * The operator CLI as an operator runs it (the bundled `cli.mjs`):
 * - `bots add` reads the bot's identity from the chat platform (the sandbox of a running gateway)
 *   and `bots list` reads it back, on its own embedded database; then `bots remove`,
 *   `taskboard pair`/`unpair`, `keys reencrypt` and their mistakes on PostgreSQL (TEST_DATABASE_URL;
 *   without it, on the embedded database too);
 * - a gateway server process and the CLI on one PostgreSQL database (TEST_DATABASE_URL): what the
 *   CLI changes, the server serves within seconds;
 * - help for every command, argument and flag; mistakes as one line on stderr, never a stack;
 * - `scripts/build.mjs` skips the build when the bundle is current.
 */
import { afterAll, assert, beforeAll, describe, it, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { execFile, execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { ALICE_ID, BOT2_ID, BOT2_TOKEN, S2_ID } from "../../src/sandbox/Seed.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { freePort, signIn, TestApp, testAppConfig } from "../utils/TestApp.ts"
import { ROOT, sharedBundle, sleep } from "./SpawnFixtures.ts"

/** The bundle the operator runs (main.mjs, cli.mjs): the run's shared one. */
let OUT = ""
beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)
const KEY = "k1:" + Buffer.alloc(32, 7).toString("base64")

/** `node scripts/build.mjs` into `outDir`; a no-op when that bundle is current (tested below). */
const buildInto = (outDir: string) => execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, env: { ...process.env, BUILD_OUTDIR: outDir } })

/** An environment without what would change the mode or the database. */
const cleanEnv = (extra: Record<string, string>): Record<string, string> => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "PORT", "LOG_LEVEL"]) {
    delete base[name]
  }
  return { ...base, TOKEN_ENCRYPTION_KEY: KEY, ...extra } as Record<string, string>
}

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI without blocking this process (a sandbox it calls may be served by this very process). */
const runCli = (env: Record<string, string>, args: ReadonlyArray<string>): Promise<CliRun> =>
  promisify(execFile)(process.execPath, [join(OUT, "cli.mjs"), ...args], { cwd: ROOT, env: cleanEnv(env), encoding: "utf8", timeout: 60_000 })
    .then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
    )

/** `f` over `items`, at most `n` at a time; the results in the order of `items`. */
const inBatches = async <A, B>(n: number, items: ReadonlyArray<A>, f: (a: A) => Promise<B>): Promise<Array<B>> => {
  const out: Array<B> = []
  for (let i = 0; i < items.length; i += n) out.push(...await Promise.all(items.slice(i, i + n).map(f)))
  return out
}

/** A mistake: exit `code`, exactly one line on stderr (matching `pattern`), no stack, nothing on stdout. */
const assertOneLine = (r: CliRun, code: number, pattern: RegExp) => {
  const lines = r.stderr.split("\n").filter((l) => l.length > 0)
  assert.strictEqual(r.code, code, `exit code; stderr:\n${r.stderr}`)
  assert.strictEqual(lines.length, 1, `one line; stderr:\n${r.stderr}`)
  assert.match(lines[0]!, pattern)
  assert.notMatch(r.stderr, /^\s+at /m, "no stack")
  assert.strictEqual(r.stdout, "")
}

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 120_000 })("cli", (it) => {
  it.effect("adds, lists and removes a bot; pairs a task board; re-encrypts", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const dataDir = mkdtempSync(join(tmpdir(), "gateway-cli-"))
      // Each process on the embedded database starts PGlite (~5 s on a loaded 2-core machine): the
      // first two commands show it is created, kept and read again; the rest run on a database of
      // PostgreSQL's when there is one (TEST_DATABASE_URL), where each takes the process's start only.
      const embedded = { DATA_DIR: dataDir, PUBLIC_URL: app.url }
      const db = TEST_DATABASE_URL === "" ? undefined : yield* Effect.promise(() => sharedDatabase(TEST_DATABASE_URL))
      let env: Record<string, string> = embedded
      const cli = (...args: Array<string>) =>
        Effect.map(Effect.promise(() => runCli(env, args)), (r) => {
          assert.strictEqual(r.code, 0, `${args.join(" ")} failed: ${r.stdout}${r.stderr}`)
          return r.stdout
        })
      try {
        assert.include(yield* cli("bots", "add", "--token", BOT2_TOKEN), `added bot ${BOT2_ID}`)
        // The third column: the Interactions Endpoint URL once the application is read, "-" before.
        assert.match(yield* cli("bots", "list"), new RegExp(`^${BOT2_ID}\\tFeedsBot\\t(-|${app.url}/interactions/${BOT2_ID})$`, "m"))
        if (db !== undefined) {
          env = { DATABASE_URL: db.url, DATA_DIR: dataDir, PUBLIC_URL: app.url }
          assert.include(yield* cli("bots", "add", "--token", BOT2_TOKEN), `added bot ${BOT2_ID}`)
        }
        assert.include(yield* cli("taskboard", "pair", S2_ID, "--team", "team-x", "--key", "k", "--token", "t"), "paired")
        assert.include(yield* cli("keys", "reencrypt"), "re-encrypted 0 secrets")
        assert.include(yield* cli("taskboard", "unpair", S2_ID), "unpaired")
        assert.include(yield* cli("bots", "remove", BOT2_ID), `removed bot ${BOT2_ID}`)
        assert.notInclude(yield* cli("bots", "list"), BOT2_ID)
        // Mistakes: one line each, and nothing registered.
        assertOneLine(yield* Effect.promise(() => runCli(env, ["bots", "add", "--token", "not-a-bot-token"])), 1, /^error: .*token/i)
        assert.notInclude(yield* cli("bots", "list"), "not-a-bot")
        assertOneLine(yield* Effect.promise(() => runCli(env, ["bots", "remove", BOT2_ID])), 1, new RegExp(`^error: there is no bot ${BOT2_ID}`))
        assertOneLine(yield* Effect.promise(() => runCli(env, ["taskboard", "unpair", S2_ID])), 1, /not paired/)
        // Parse and configuration mistakes open nothing (src/cli.ts: the database only for the command that runs): together.
        const [badId, noKey, unknown, shortKey] = yield* Effect.promise(() =>
          Promise.all([
            runCli(env, ["bots", "remove", "bot-2"]),
            runCli(env, ["taskboard", "pair", S2_ID, "--team", "t"]),
            runCli(env, ["bots", "frob"]),
            runCli({ ...env, TOKEN_ENCRYPTION_KEY: "short" }, ["bots", "list"])
          ])
        )
        assertOneLine(badId, 2, /^error: Invalid value for argument <id>: "bot-2"/)
        assertOneLine(noKey, 2, /^error: Missing required flag: --key .*--help/)
        assertOneLine(unknown, 2, /^error: Unknown subcommand "frob"/)
        assertOneLine(shortKey, 2, /^error: configuration error: TOKEN_ENCRYPTION_KEY/)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
        if (db !== undefined) yield* Effect.promise(db.close)
      }
    }), 300_000)
})

describe("cli without a database", () => {
  // Every command and subcommand, and what its help must describe.
  const COMMANDS: ReadonlyArray<ReadonlyArray<string>> = [
    [], ["bots"], ["bots", "add"], ["bots", "list"], ["bots", "remove"],
    ["taskboard"], ["taskboard", "pair"], ["taskboard", "unpair"], ["keys"], ["keys", "reencrypt"]
  ]
  // --help needs no database: this one does not answer.
  const noDb = { DATABASE_URL: "postgres://gateway:secret@127.0.0.1:1/gateway", DATA_DIR: "/nonexistent" }

  it("prints help for every command, with a description of each subcommand, argument and flag", async () => {
    // No database, no shared state: three help runs at a time (each is a process start), checked in order.
    const runs = await inBatches(3, COMMANDS, (path) => runCli(noDb, [...path, "--help"]))
    for (const [i, path] of COMMANDS.entries()) {
      const r = runs[i]!
      const where = `gateway ${path.join(" ")} --help`
      assert.strictEqual(r.code, 0, `${where}: ${r.stderr}`)
      assert.strictEqual(r.stderr, "", where)
      assert.match(r.stdout, /^DESCRIPTION\n {2}\S/m, `${where} describes the command`)
      // Rows of the ARGUMENTS, FLAGS and SUBCOMMANDS sections: name (and type), then the description.
      const sections = r.stdout.split(/\n(?=[A-Z][A-Z ]+\n)/)
      for (const section of sections.filter((s) => /^(ARGUMENTS|FLAGS|SUBCOMMANDS)\n/.test(s))) {
        for (const row of section.split("\n").slice(1).filter((l) => l.trim().length > 0)) {
          assert.match(row, /^ {2}\S+(?: (?:string|<[^>]+>))?\s{2,}\S/, `${where}: undescribed row "${row}"`)
        }
      }
    }
    const version = await runCli(noDb, ["--version"])
    assert.strictEqual(version.stdout.trim(), `gateway v${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}`)
  }, 120_000)

  it("an unreachable database is one line naming DATABASE_URL without its password", async () => {
    const r = await runCli(noDb, ["bots", "list"])
    assertOneLine(r, 1, /^error: cannot use DATABASE_URL \(127\.0\.0\.1:1\/gateway\)/)
    assert.notInclude(r.stderr, "secret")
  }, 60_000)

  it("scripts/build.mjs skips the build when the bundle is current, and rebuilds when an input is newer", () => {
    // A copy of the shared bundle (its record of inputs included), in the tree so that its imports
    // resolve; the shared one is never rebuilt under the processes that run it.
    const out = mkdtempSync(join(ROOT, ".build-test", "cli-"))
    try {
      cpSync(OUT, out, { recursive: true })
      buildInto(out) // current unless a source changed since the shared build started
      const cliMtime = () => statSync(join(out, "cli.mjs")).mtimeMs
      const before = cliMtime()
      const t0 = Date.now()
      buildInto(out)
      assert.strictEqual(cliMtime(), before, "current: not rebuilt")
      assert.isBelow(Date.now() - t0, 15_000)
      // As if every input had changed since the last build started.
      const record = join(out, ".build-inputs.json")
      writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, "utf8")), startedAt: 0 }))
      buildInto(out)
      assert.isAbove(cliMtime(), before, "an input is newer: rebuilt")
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)
})

// ---------------------------------------------------------------------------------------------
// A server and the CLI on one database
// ---------------------------------------------------------------------------------------------

/**
 * One database for two processes: a fresh database on TEST_DATABASE_URL's PostgreSQL. (Not PGlite:
 * its socket server multiplexes every connection into one backend session, and a pool's concurrent
 * extended-protocol queries then interleave, e.g. pg-boss's "portal cannot be run".)
 */
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? ""
const sharedDatabase = async (admin: string): Promise<{
  readonly url: string
  /** Connections to this database by `application_name`. */
  readonly connections: () => Promise<Record<string, number>>
  readonly close: () => Promise<void>
}> => {
  const name = `gateway_cli_${randomBytes(6).toString("hex")}`
  const scope = Effect.runSync(Scope.make())
  const sql = await Effect.runPromise(PgClient.make({ url: Redacted.make(admin), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer), Scope.provide(scope)))
  await Effect.runPromise(sql.unsafe(`CREATE DATABASE ${name}`))
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    connections: async () => {
      const rows = await Effect.runPromise(sql<{ name: string; n: number }>`SELECT application_name AS name, count(*)::int AS n
        FROM pg_stat_activity WHERE datname = ${name} GROUP BY 1`)
      return Object.fromEntries(rows.map((r) => [r.name, r.n]))
    },
    close: async () => {
      await Effect.runPromise(sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

const processes = childProcesses()
afterAll(processes.cleanUp)

describe("a running server and the CLI on one database", () => {
  if (TEST_DATABASE_URL === "") {
    console.warn("TEST_DATABASE_URL is not set: the server-and-CLI test is skipped (test/platform/RegistryChanges.test.ts covers the registry's TTL on PGlite)")
  }
  it.skipIf(TEST_DATABASE_URL === "")("the server stops serving a bot the CLI removed, and serves it again once re-added, within seconds; it holds at most DATABASE_POOL_SIZE connections", async () => {
    const db = await sharedDatabase(TEST_DATABASE_URL)
    processes.onCleanUp(db.close)
    const dataDir = processes.tempDir("gateway-cli-server-")
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const env = { DATABASE_URL: db.url, DATA_DIR: dataDir, PUBLIC_URL: url }

    const server = processes.spawn(process.execPath, [join(OUT, "main.mjs")], {
      cwd: ROOT,
      env: cleanEnv({ ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "Warn", DATABASE_POOL_SIZE: "3" })
    })
    const output = () => server.output().all
    const deadline = Date.now() + 60_000
    for (;;) {
      const status = await fetch(`${url}/readyz`, { headers: { "user-agent": "cli-test" } }).then((r) => r.status, () => 0)
      if (status === 200) break
      if (Date.now() > deadline || server.child.exitCode !== null) assert.fail(`server not ready:\n${output()}`)
      await sleep(250)
    }

    const app = TestApp.of({ url, config: testAppConfig(port) })
    const { access_token } = await Effect.runPromise(signIn(ALICE_ID).pipe(Effect.provideService(TestApp, app))).catch((e) => {
      throw new Error(`${String(e)}\nserver output:\n${output()}`)
    })
    const get = (path: string) => fetch(url + path, { headers: { "user-agent": "cli-test", authorization: `Bearer ${access_token}` } })
    const listed = async () => ((await (await get("/api/v1/bots")).json()) as { bots: Array<{ id: string }> }).bots.map((b) => b.id)
    /**
     * The registry's TTL is 5 s (layers/platform/BotsSql.ts): a change by another process (the CLI)
     * shows within it, plus this machine's delays (the poll below, a loaded machine's requests).
     * Well below 30 s: a registry cached as long as the bots' applications are (TTL_MS) would show
     * the re-added bot only about 30 s after the removal showed (when it was reloaded).
     */
    const WITHIN_TTL_MS = 15_000
    /** Polls until the server's bot list satisfies `ok`; how long it took. */
    const until = async (ok: (ids: Array<string>) => boolean) => {
      const t0 = Date.now()
      while (!ok(await listed())) {
        if (Date.now() - t0 > 20_000) assert.fail(`the server still lists ${JSON.stringify(await listed())}`)
        await sleep(200)
      }
      return Date.now() - t0
    }

    assert.include(await listed(), BOT2_ID, "the sandbox's bots are registered at start")
    assert.strictEqual((await get(`/api/v1/bots/${BOT2_ID}/servers`)).status, 200)

    const removed = await runCli(env, ["bots", "remove", BOT2_ID])
    assert.strictEqual(removed.code, 0, removed.stderr)
    assert.include(removed.stdout, `removed bot ${BOT2_ID}`)
    assert.isAtMost(await until((ids) => !ids.includes(BOT2_ID)), WITHIN_TTL_MS, "gone from the list within the 5 s TTL")
    assert.strictEqual((await get(`/api/v1/bots/${BOT2_ID}/servers`)).status, 404, "and no longer served")

    const added = await runCli(env, ["bots", "add", "--token", BOT2_TOKEN])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.isAtMost(await until((ids) => ids.includes(BOT2_ID)), WITHIN_TTL_MS, "back within the TTL")
    assert.strictEqual((await get(`/api/v1/bots/${BOT2_ID}/servers`)).status, 200)

    // The CLI and the server share the registry: the list the CLI prints is the server's.
    const list = await runCli(env, ["bots", "list"])
    assert.match(list.stdout, new RegExp(`^${BOT2_ID}\\t`, "m"))

    // DATABASE_POOL_SIZE=3: 60 readiness checks at once (each a statement) and the job engine's
    // own work never take more; the connections carry the process's role as application_name.
    let most = 0
    const sampling = (async () => {
      for (let i = 0; i < 40; i++) {
        most = Math.max(most, (await db.connections())["gateway-all"] ?? 0)
        await sleep(10)
      }
    })()
    const ready = await Promise.all(Array.from({ length: 60 }, () =>
      fetch(`${url}/readyz`, { headers: { "user-agent": "cli-test" } }).then((r) => r.status)))
    await sampling
    assert.deepStrictEqual([...new Set(ready)], [200])
    assert.isAtLeast(most, 1, JSON.stringify(await db.connections()))
    assert.isAtMost(most, 3, JSON.stringify(await db.connections()))
  }, 180_000)
})
