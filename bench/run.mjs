// `npm run bench [-- --quick]`: the gateway against a bare node:http ceiling, Effect's HttpApi floor
// (bare, and with the gateway's middleware) and a Fastify + pg twin, in one run, each in its own
// process, with autocannon in a further process. Scenarios S1–S7 (bench/README.md). Writes a table
// to stdout and bench/results/latest.json.
//
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; the bench creates and
// drops its own database `gateway_bench` there, or BENCH_DB), BENCH_LOG_LEVEL (gateway LOG_LEVEL, default Warn),
// BENCH_ROUNDS, BENCH_SECONDS, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_AUDIT_ROWS, BENCH_RATE, BENCH_ONLY,
// BENCH_MAIN (the gateway's bundle, default dist/main.mjs), BENCH_GATEWAY_NODE_ARGS, BENCH_HEAP_SPACES=0 (no V8
// heap figures in S7's memory split: the gateway then runs without the bench/heap-spaces.mjs preload).
// S11 (bench/forms.mjs) runs last; BENCH_ONLY=S11 runs it alone. BENCH_S11_MEMBERS, BENCH_S8_SOURCES.
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { deliveryLines, runDelivery } from "./delivery-run.mjs"
import { formsFailures, formsLines, runForms } from "./forms-run.mjs"
import { memoryLine, memorySnapshot } from "./memory.mjs"
import { buildFloor } from "./floor/build.mjs"
import { nodeFlags } from "../scripts/node-flags.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const quick = process.argv.includes("--quick")
const num = (name, fallback) => (process.env[name] !== undefined ? Number(process.env[name]) : fallback)
const ROUNDS = num("BENCH_ROUNDS", quick ? 1 : 3)
const SECONDS = num("BENCH_SECONDS", quick ? 2 : 10)
const WARMUP = num("BENCH_WARMUP", quick ? 1 : 3)
const CONNECTIONS = num("BENCH_CONNECTIONS", 50)
const AUDIT_ROWS = num("BENCH_AUDIT_ROWS", quick ? 100_000 : 1_000_000)
const STARTS = quick ? 1 : 3
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "Warn"
// BENCH_FLOOR_MW_WITHOUT=global,auth,schema,global+auth: one more window per item, `floor-mw-<item>`, floor-mw
// without those parts of the chain (bench/floor/server.ts), run next to floor-mw to split its cost.
const FLOOR_MW_WITHOUT = (process.env.BENCH_FLOOR_MW_WITHOUT ?? "").split(",").filter((p) => p !== "")
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
// BENCH_DB: another name, so two runs on one PostgreSQL do not drop each other's database.
const BENCH_DB = process.env.BENCH_DB ?? "gateway_bench"
const EXTRA_USERS = 50
const UA = "gateway-bench/1.0"

const BOT1 = "200000000000000001"
const S1 = "300000000000000001"
const S2 = "300000000000000002"
const ALICE = "100000000000000001"
const S1_TEXT = "310000000000000102"
const extraUserId = (i) => `11${String(i).padStart(16, "0")}`

const t0 = performance.now()
const log = (msg) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const median = (xs) => {
  const s = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b)
  if (s.length === 0) return undefined
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })

const workDir = mkdtempSync(join(tmpdir(), "gateway-bench-"))
const children = new Set()
const spawnProc = (name, args, env = {}) => {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const logFile = join(workDir, `${name}.log`)
  let tail = ""
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-4000)
  }
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  child.tail = () => tail
  child.logFile = logFile
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}
const stop = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })
const cleanup = () => {
  for (const c of children) c.kill("SIGKILL")
}
process.on("exit", cleanup)
process.on("SIGINT", () => process.exit(130))

const waitFor = async (url, child, timeoutMs = 30_000, interval = 5, anyStatus = false) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited ${child.exitCode}\n${child.tail()}`)
    try {
      const res = await fetch(url, { headers: { "user-agent": UA } })
      await res.arrayBuffer()
      if (res.status === 200 || anyStatus) return
    } catch {}
    await sleep(interval)
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms\n${child.tail()}`)
}

const rssMiB = (pid) => {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
    return Math.round(Number(line.split(/\s+/)[1]) / 1024)
  } catch {
    return undefined
  }
}

// ---- database -------------------------------------------------------------------------------------

const withUrlDb = (url, db) => {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.toString()
}

const prepareDatabase = async () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 })
  try {
    await admin.connect()
  } catch (e) {
    log(`WARNING: PostgreSQL at ${ADMIN_URL} is unreachable (${e.message}): falling back to embedded PGlite.`)
    log("WARNING: PGlite figures are NOT comparable with PostgreSQL runs; the twin is skipped.")
    return undefined
  }
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${BENCH_DB}`)
  await admin.end()
  return withUrlDb(ADMIN_URL, BENCH_DB)
}
const dropDatabase = async () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`)
  await admin.end()
}

// ---- the gateway ----------------------------------------------------------------------------------

const gatewayEnv = (port, databaseUrl, dataDir, key) => ({
  PORT: String(port),
  HOST: "127.0.0.1",
  SANDBOX: "true",
  DATA_DIR: dataDir,
  TOKEN_ENCRYPTION_KEY: key,
  RATE_LIMIT_API_PER_MINUTE: "100000000",
  RATE_LIMIT_AUTH_PER_HOUR: "100000000",
  // S3 creates forms for as long as it runs: the per-server limit (50 by default) would turn it into
  // a benchmark of the 400 answer.
  FORMS_MAX_PER_SERVER: "100000000",
  LOG_LEVEL,
  SANDBOX_EXTRA_USERS: String(EXTRA_USERS),
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  DISCORD_CLIENT_ID: "",
  REDIS_URL: ""
})

// S7's memory split asks the gateway for V8's heap spaces through a preload that answers SIGUSR2
// (bench/heap-spaces.mjs: a listener, no work until signalled); BENCH_HEAP_SPACES=0 leaves it out.
const heapFile = process.env.BENCH_HEAP_SPACES === "0" ? undefined : join(workDir, "heap-spaces.json")
const startGateway = async (env) => {
  const started = performance.now()
  // The flags of `npm start` (scripts/node-flags.mjs), then any of BENCH_GATEWAY_NODE_ARGS (the last of a flag wins).
  const nodeArgs = [
    ...nodeFlags,
    ...(process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter((a) => a !== ""),
    ...(heapFile === undefined ? [] : ["--import", join(root, "bench/heap-spaces.mjs")])
  ]
  // BENCH_MAIN: the bundle to run (compare two builds: `BUILD_OUTDIR=.build-test/before node scripts/build.mjs`).
  const child = spawnProc("gateway", [...nodeArgs, process.env.BENCH_MAIN ?? "dist/main.mjs"], {
    ...env,
    ...(heapFile === undefined ? {} : { BENCH_HEAP_SPACES_FILE: heapFile })
  })
  await waitFor(`http://127.0.0.1:${env.PORT}/readyz`, child, 60_000, 2)
  return { child, startMs: performance.now() - started }
}

const signIn = async (base, userId) => {
  const login = await fetch(
    `${base}/auth/idp/login?redirect_uri=${encodeURIComponent("http://127.0.0.1:9/callback")}&state=b`,
    { redirect: "manual", headers: { "user-agent": UA } }
  )
  if (login.status !== 307) throw new Error(`login answered ${login.status}: ${await login.text()}`)
  const cookie = login.headers.get("set-cookie").split(";")[0]
  const authorize = await fetch(`${login.headers.get("location")}&login_hint=${userId}`, { redirect: "manual" })
  const callback = await fetch(authorize.headers.get("location"), {
    redirect: "manual",
    headers: { cookie, "user-agent": UA }
  })
  const code = new URL(callback.headers.get("location")).searchParams.get("code")
  if (code === null) throw new Error(`sign-in of ${userId} failed: ${callback.headers.get("location")}`)
  const token = await fetch(`${base}/auth/idp/token`, {
    method: "POST",
    headers: { authorization: code, "user-agent": UA }
  })
  if (token.status !== 200) throw new Error(`token answered ${token.status}: ${await token.text()}`)
  return (await token.json()).access_token
}

const api = async (base, token, method, path, body) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      "user-agent": UA,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, text: await res.text() }
}

const modulesPath = `/api/v1/bots/${BOT1}/servers/${S1}/modules`
const formsPath = (server) => `/api/v1/bots/${BOT1}/servers/${server}/modules/forms`
const logsPath = `/api/v1/bots/${BOT1}/servers/${S1}/logs`
const formBody = JSON.stringify({
  title: "Bench application",
  channel_id: S1_TEXT,
  steps: [
    { type: "message", string: "Why do you want to join?" },
    { type: "message", string: "How did you find us?" }
  ]
})

// The counting constants of the audit buckets, bundled from the source (Node 20 cannot import .ts).
const auditConstants = async () => {
  const { build } = await import("esbuild")
  const out = await build({
    stdin: { contents: `export { AUDIT_COUNT_MODULES, AUDIT_DENSE } from "./src/layers/audit/AuditBuckets.ts"`, resolveDir: root, loader: "ts" },
    bundle: true, platform: "node", format: "esm", write: false, logLevel: "warning"
  })
  const file = join(workDir, "audit-constants.mjs")
  writeFileSync(file, out.outputFiles[0].text)
  return import(file)
}

// Bulk load as bench/audit-seed.mjs does: row triggers off while loading with generate_series, then
// audit_counts computed in one GROUP BY per level (what the triggers would have built). ~100x faster
// than appending through the triggers.
const seedAudit = async (databaseUrl, rows) => {
  const { AUDIT_COUNT_MODULES, AUDIT_DENSE } = await auditConstants()
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query("ALTER TABLE audit_entries DISABLE TRIGGER USER")
  const chunk = 500_000
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1)
    await client.query(`INSERT INTO audit_entries
        (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
      SELECT '${BOT1}', '${S1}', now() - interval '365 days' + g * (interval '365 days' / ${rows}),
        (110000000000000000 + g % 50)::text, 'Load ' || (g % 50), NULL,
        (ARRAY['forms','photo','forum','rss','streaming','microblog','video'])[1 + (g * 13) % 7],
        g % 100000, (ARRAY['GET','PUSH','PATCH','DELETE'])[1 + g % 4],
        'Form "Application ' || (g % 100000) || '" updated'
      FROM generate_series(${from}, ${to}) AS g`)
  }
  await client.query("SET work_mem = '256MB'")
  await client.query(`DELETE FROM audit_count_shards WHERE server_id = '${S1}' AND bot_id = '${BOT1}'`)
  const sums = ["count(*)", ...AUDIT_COUNT_MODULES.map((m) => `count(*) FILTER (WHERE e.module_name = '${m}')`)].join(", ")
  const cols = ["n", ...AUDIT_COUNT_MODULES].join(", ")
  const scope = `e.server_id = '${S1}' AND e.bot_id = '${BOT1}'`
  // Shard 0 only; a dense month has every day and hour counted (migration 0004).
  await client.query(`INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, dense, ${cols})
    SELECT e.server_id, e.bot_id, 2, audit_bucket(e.at, 2), 0, count(*) > ${AUDIT_DENSE}, ${sums}
    FROM audit_entries e WHERE ${scope} GROUP BY 1, 2, 4`)
  for (const level of [1, 0]) {
    await client.query(`INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, ${cols})
      SELECT e.server_id, e.bot_id, ${level}, audit_bucket(e.at, ${level}), 0, ${sums}
      FROM audit_entries e JOIN audit_count_shards p ON p.server_id = e.server_id AND p.bot_id = e.bot_id
        AND p.level = 2 AND p.shard = 0 AND p.bucket = audit_bucket(e.at, 2) AND p.dense
      WHERE ${scope} GROUP BY 1, 2, 4`)
  }
  await client.query("ALTER TABLE audit_entries ENABLE TRIGGER USER")
  await client.query("VACUUM ANALYZE audit_entries")
  await client.query("VACUUM ANALYZE audit_count_shards")
  await client.end()
}

// ---- load -----------------------------------------------------------------------------------------

const load = (spec) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "bench/load.mjs"), JSON.stringify(spec)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`load exited ${code}: ${err}`))
      resolve(JSON.parse(out.trim().split("\n").pop()))
    })
  })

const window = (url, token, extra = {}) => ({
  url,
  headers: { authorization: `Bearer ${token}`, "user-agent": UA, ...(extra.headers ?? {}) },
  method: extra.method ?? "GET",
  body: extra.body,
  paths: extra.paths,
  // The server's process: load.mjs reports its CPU per request over the measured window.
  pid: extra.pid,
  // And PostgreSQL's (the gateway's windows on PostgreSQL; the twin's, which reads it too).
  postgres: extra.postgres ?? false,
  connections: extra.connections ?? CONNECTIONS,
  warmupSeconds: WARMUP,
  seconds: SECONDS
})

// S6: 1,000 requests from 50 users on a cold cache, 50 at a time; the sandbox counts the calls.
const amplification = async (base, tokens) => {
  await fetch(`${base}/sandbox/stats`, { method: "DELETE", headers: { "user-agent": UA } })
  const perUser = Math.ceil(1000 / tokens.length)
  let non2xx = 0
  const started = performance.now()
  await Promise.all(tokens.map(async (token) => {
    for (let i = 0; i < perUser; i++) {
      const r = await api(base, token, "GET", modulesPath)
      if (r.status !== 200) non2xx++
    }
  }))
  const ms = performance.now() - started
  const stats = await (await fetch(`${base}/sandbox/stats`, { headers: { "user-agent": UA } })).json()
  const calls = Object.values(stats.calls ?? {}).reduce((a, b) => a + (typeof b === "number" ? b : b.count ?? 0), 0)
  return {
    requests: perUser * tokens.length,
    non2xx,
    rps: Math.round((perUser * tokens.length) / (ms / 1000)),
    upstream_calls: calls,
    upstream_429: stats.status429 ?? 0,
    distinct_resources: tokens.length + 1,
    stats
  }
}

// ---- the floors -----------------------------------------------------------------------------------

// The header names of an answer, without those of the connection (their values vary anyway).
const headerNames = (res) =>
  [...res.headers.keys()].filter((h) => !["date", "connection", "keep-alive"].includes(h)).sort().join(",")
const answerOf = async (url, token) => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, "user-agent": UA } })
  return { status: res.status, text: await res.text(), names: headerNames(res), res }
}

/**
 * The floors answer S1's bytes; floor-mw also S1's headers (request id, RateLimit fields) and S1's
 * refusal of a wrong token (the same 401 envelope and WWW-Authenticate): its middleware is the gateway's.
 * The ablated `floor-mw-<parts>` windows only have to answer S1's bytes (and 401 while they authenticate).
 */
const checkFloors = async (base, floors, token, s1Text) => {
  const wrong = "bmg_at_floor-check-not-a-token"
  const [s1, s1Refused] = [await answerOf(`${base}${modulesPath}`, token), await answerOf(`${base}${modulesPath}`, wrong)]
  for (const [mode, { base: floorBase }] of Object.entries(floors)) {
    const [ok, refused] = [await answerOf(`${floorBase}${modulesPath}`, token), await answerOf(`${floorBase}${modulesPath}`, wrong)]
    if (ok.status !== 200 || ok.text !== s1Text) throw new Error(`the ${mode}'s answer differs from S1's: ${ok.status} ${ok.text.slice(0, 200)}`)
    if (refused.status !== 401 && !(mode.startsWith("floor-mw-") && mode.split("-")[2].split("+").includes("auth"))) {
      throw new Error(`the ${mode} answered a wrong token with ${refused.status}`)
    }
    if (mode !== "floor-mw") continue
    if (ok.names !== s1.names) throw new Error(`floor-mw's headers (${ok.names}) differ from S1's (${s1.names})`)
    if (refused.text !== s1Refused.text || refused.names !== s1Refused.names || refused.res.headers.get("www-authenticate") !== s1Refused.res.headers.get("www-authenticate")) {
      throw new Error(`floor-mw's 401 differs from S1's: ${refused.names} ${refused.text} vs ${s1Refused.names} ${s1Refused.text}`)
    }
  }
}

// ---- main -----------------------------------------------------------------------------------------

/** S11 alone (`BENCH_ONLY=S11`): nothing else is started. */
const formsOnly = async () => {
  const forms = await runForms(quick).catch((e) => ({ error: e.message }))
  if (forms.error !== undefined) {
    process.stderr.write(`bench FAILED:\n  S11: ${forms.error}\n`)
    process.exitCode = 1
    return
  }
  mkdirSync(join(root, "bench/results"), { recursive: true })
  writeFileSync(join(root, "bench/results", quick ? "quick-s11.json" : "latest-s11.json"), JSON.stringify({ mode: quick ? "quick" : "full", when: new Date().toISOString(), forms }, null, 2) + "\n")
  process.stdout.write(`\n${formsLines(forms).join("\n")}\n\n`)
  const failures = formsFailures(forms)
  if (failures.length > 0) {
    process.stderr.write(`bench FAILED:\n  ${failures.join("\n  ")}\n`)
    process.exitCode = 1
  }
}

const main = async () => {
  if (process.env.BENCH_ONLY === "S11") return formsOnly()
  log(`mode ${quick ? "quick" : "full"}: ${ROUNDS} round(s), ${WARMUP}s warm-up + ${SECONDS}s windows, ${CONNECTIONS} connections; node ${process.version}, ${cpus().length} cores`)
  const databaseUrl = await prepareDatabase()
  const key = `k1:${randomBytes(32).toString("base64")}`
  const dataDir = join(workDir, "data")
  mkdirSync(dataDir, { recursive: true })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = gatewayEnv(port, databaseUrl, dataDir, key)

  // S7: start-up to /readyz 200 (the first start also migrates the fresh database).
  const starts = []
  let first
  let readyMemory
  for (let i = 0; i < STARTS; i++) {
    const g = await startGateway(env)
    starts.push(g.startMs)
    readyMemory = await memorySnapshot(g.child, heapFile)
    log(`start-up ${i + 1}: ${g.startMs.toFixed(0)} ms (at ready: ${memoryLine(readyMemory)})`)
    if (i < STARTS - 1) await stop(g.child)
    else first = g
  }

  // Users sign in through the sandbox (its OAuth grants live in this process: no restart after this).
  const gateway = first.child
  const alice = await signIn(base, ALICE)
  const users = []
  for (let i = 1; i <= EXTRA_USERS; i++) users.push(await signIn(base, extraUserId(i)))
  log(`signed in alice and ${users.length} users`)

  // S6 first: no server, guild or guild-list lookup has been made yet, every cache is cold.
  const s6 = await amplification(base, users)
  log(`S6: ${s6.requests} requests, ${s6.non2xx} non-2xx, ${s6.upstream_calls} upstream calls, ${s6.upstream_429} upstream 429`)

  // Seed: forms, feeds, audit entries.
  for (let i = 0; i < 20; i++) {
    const r = await api(base, alice, "POST", formsPath(S1), JSON.parse(formBody))
    if (r.status !== 200) throw new Error(`seeding a form answered ${r.status}: ${r.text}`)
  }
  for (const feed of ["/sandbox/rss/news.xml", "/sandbox/rss/atom.xml"]) {
    const r = await api(base, alice, "POST", `/api/v1/bots/${BOT1}/servers/${S1}/modules/rss/feeds`, {
      feed_identifier: `${base}${feed}`,
      webhook_channel: S1_TEXT
    })
    if (r.status !== 200) log(`WARNING: seeding an rss feed answered ${r.status}: ${r.text.slice(0, 200)}`)
  }
  const auditStart = performance.now()
  if (databaseUrl) await seedAudit(databaseUrl, AUDIT_ROWS)
  else log("WARNING: PGlite mode: S5 runs without the bulk audit seed")
  log(`seeded 20 forms, feeds, ${AUDIT_ROWS} audit entries (${((performance.now() - auditStart) / 1000).toFixed(1)} s)`)

  // Baselines: the S1 answer as the gateway gives it, every bench token known to the ceiling.
  const s1Answer = await api(base, alice, "GET", modulesPath)
  if (s1Answer.status !== 200) throw new Error(`S1 answered ${s1Answer.status}: ${s1Answer.text}`)
  const ceilingPort = await freePort()
  const ceilingConfig = join(workDir, "ceiling.json")
  const sha = (t) => createHash("sha256").update(t, "utf8").digest("hex")
  writeFileSync(ceilingConfig, JSON.stringify({
    port: ceilingPort,
    path: modulesPath,
    tokens: Object.fromEntries([[sha(alice), ALICE], ...users.map((t, i) => [sha(t), extraUserId(i + 1)])]),
    body: s1Answer.text
  }))
  const ceiling = spawnProc("ceiling", ["bench/ceiling.mjs", ceilingConfig])
  const ceilingBase = `http://127.0.0.1:${ceilingPort}`
  // The floors (bench/floor/server.ts): S1's route on Effect's HttpApi, bare and with our middleware.
  // Outside workDir (removed at the end), so profile-summary.mjs finds the bundle's source map after the run.
  const floorBundle = await buildFloor(join(tmpdir(), "gateway-bench-floor", "floor.mjs"))
  const floors = {}
  for (const mode of ["floor", "floor-mw", ...FLOOR_MW_WITHOUT.map((w) => `floor-mw-${w}`)]) {
    const port = await freePort()
    const file = join(workDir, `${mode}.json`)
    const without = mode.startsWith("floor-mw-") ? mode.slice("floor-mw-".length).split("+") : []
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(ceilingConfig, "utf8")), mode, port, logLevel: LOG_LEVEL, without }))
    // The gateway's start flags, then any of BENCH_FLOOR_NODE_ARGS (profiling: `--cpu-prof --cpu-prof-dir=<dir>`).
    const args = [...nodeFlags, ...(process.env.BENCH_FLOOR_NODE_ARGS ?? "").split(" ").filter((a) => a !== "")]
    floors[mode] = { child: spawnProc(mode, [...args, floorBundle, file]), base: `http://127.0.0.1:${port}` }
  }
  let twin
  let twinBase
  if (databaseUrl) {
    const twinPort = await freePort()
    twin = spawnProc("twin", ["bench/twin/server.mjs"], { PORT: String(twinPort), DATABASE_URL: databaseUrl })
    twinBase = `http://127.0.0.1:${twinPort}`
  }
  await waitFor(ceilingBase, ceiling, 10_000, 20, true)
  for (const f of Object.values(floors)) await waitFor(f.base, f.child, 20_000, 20, true)
  if (twin) await waitFor(twinBase, twin, 10_000, 20, true)
  const ceilingCheck = await api(ceilingBase, alice, "GET", modulesPath)
  if (ceilingCheck.text !== s1Answer.text) throw new Error("the ceiling's answer differs from the gateway's")
  await checkFloors(base, floors, alice, s1Answer.text)
  if (twinBase) {
    const [a, b] = [await api(twinBase, alice, "GET", formsPath(S1)), await api(base, alice, "GET", formsPath(S1))]
    if (a.status !== 200 || a.text !== b.text) throw new Error(`the twin's answer differs: ${a.status} ${a.text.slice(0, 200)} vs ${b.text.slice(0, 200)}`)
  }
  const s5Check = await api(base, alice, "GET", `${logsPath}?page_size=50&page=2`)
  if (s5Check.status !== 200) throw new Error(`S5 answered ${s5Check.status}: ${s5Check.text.slice(0, 300)}`)
  const pageMax = JSON.parse(s5Check.text).page_max
  const s3Check = await api(base, alice, "POST", formsPath(S2), JSON.parse(formBody.replace("310000000000000102", "310000000000000202")))
  if (s3Check.status !== 200) throw new Error(`S3 answered ${s3Check.status}: ${s3Check.text.slice(0, 300)}`)
  const s4Check = await api(base, alice, "POST", "/auth/idp/token/check")
  if (s4Check.status !== 200) throw new Error(`S4 answered ${s4Check.status}: ${s4Check.text}`)

  // Audit pages: the first pages, pages deep in the year, and one module's pages.
  const logPaths = [1, 2, 3, 10, 100, Math.floor(pageMax / 2), pageMax - 1].map((p) => `${logsPath}?page_size=50&page=${Math.max(1, p)}`)
  logPaths.push(`${logsPath}?page_size=50&page=1&module=forms`, `${logsPath}?page_size=50&page=500&module=rss`)

  const gw = gateway.pid
  // A gateway window: its process's CPU, and PostgreSQL's when it runs on one.
  const onGateway = { pid: gw, postgres: Boolean(databaseUrl) }
  const windows = [
    ["ceiling", () => load(window(`${ceilingBase}${modulesPath}`, alice, { pid: ceiling.pid }))],
    // S1's cost split: ceiling (node:http) → floor (+ Effect's HttpApi stack) → floor-mw (+ our middleware) → S1 (+ the handler's work).
    ["floor", () => load(window(`${floors.floor.base}${modulesPath}`, alice, { pid: floors.floor.child.pid }))],
    ...["floor-mw", ...FLOOR_MW_WITHOUT.map((w) => `floor-mw-${w}`)].map((mode) =>
      [mode, () => load(window(`${floors[mode].base}${modulesPath}`, alice, { pid: floors[mode].child.pid }))]),
    ["S1", () => load(window(`${base}${modulesPath}`, alice, onGateway))],
    ...(twinBase ? [["twin", () => load(window(`${twinBase}${formsPath(S1)}`, alice, { pid: twin.pid, postgres: true }))]] : []),
    ["S2", () => load(window(`${base}${formsPath(S1)}`, alice, onGateway))],
    ["S3", () => load(window(`${base}${formsPath(S2)}`, alice, {
      method: "POST",
      body: formBody.replace("310000000000000102", "310000000000000202"),
      headers: { "content-type": "application/json" },
      ...onGateway
    }))],
    ["S4", () => load(window(`${base}/auth/idp/token/check`, alice, { method: "POST", ...onGateway }))],
    ["S5", () => load(window(`${base}${logsPath}`, alice, { paths: logPaths, ...onGateway }))],
    // The audit pages again at 8 connections: the issue's latency target there is a p50 of 10 ms.
    ["S5-8", () => load(window(`${base}${logsPath}`, alice, { paths: logPaths, connections: 8, ...onGateway }))]
  ]
  const results = Object.fromEntries(windows.map(([n]) => [n, []]))
  // BENCH_ONLY=S1,ceiling runs only those windows (profiling); floor-mw brings its BENCH_FLOOR_MW_WITHOUT windows.
  const only = process.env.BENCH_ONLY?.split(",")
  const selected = (name) => only === undefined || only.includes(name.startsWith("floor-mw-") ? "floor-mw" : name)
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, run] of windows) {
      if (!selected(name)) continue
      const r = await run()
      results[name].push(r)
      log(`round ${round} ${name}: ${r.rps} rps, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, non-2xx ${r.non2xx}, errors ${r.errors}, cpu ${r.cpu_us_per_req ?? "–"} µs/req${r.db_cpu_us_per_req == null ? "" : `, PostgreSQL ${r.db_cpu_us_per_req} µs/req`}`)
    }
    // Between rounds (outside every window): whether the gateway's memory keeps growing with the load.
    if (round < ROUNDS) log(`gateway memory after round ${round}: ${memoryLine(await memorySnapshot(gateway, heapFile))}`)
  }
  // RSS after all load, and what it is made of (bench/memory.mjs): mappings from /proc/<pid>/smaps, V8's spaces.
  const memory = await memorySnapshot(gateway, heapFile)
  const rss = memory.rss ?? rssMiB(gateway.pid)
  log(`S7 after load: ${memoryLine(memory)}`)
  // And once the process has been idle a while: what a long-running gateway holds between bursts
  // (V8 hands freed heap pages back only at a memory-reducing GC, which waits for a quiet spell).
  const SETTLE = Number(process.env.BENCH_SETTLE_SECONDS ?? (quick ? 5 : 30))
  await new Promise((r) => setTimeout(r, SETTLE * 1000))
  const settled = await memorySnapshot(gateway, heapFile)
  log(`S7 ${SETTLE} s after load: ${memoryLine(settled)}`)

  const agg = (name) => {
    const rs = results[name] ?? []
    return {
      rps: median(rs.map((r) => r.rps)),
      p50_ms: median(rs.map((r) => r.p50_ms)),
      p99_ms: median(rs.map((r) => r.p99_ms)),
      non2xx: rs.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
      // The server process's CPU per request over the measured window (the gateway's includes its workers' background).
      cpu_us_per_req: median(rs.map((r) => r.cpu_us_per_req ?? undefined)) ?? null,
      // The local PostgreSQL server's CPU per request over the same window (null without one).
      db_cpu_us_per_req: median(rs.map((r) => r.db_cpu_us_per_req ?? undefined)) ?? null
    }
  }
  const ratioIn = (name, against) => {
    // Ratio per round (the two were measured next to each other), then the median.
    const a = results[name] ?? []
    const b = results[against] ?? []
    return median(a.map((r, i) => (b[i] ? r.rps / b[i].rps : undefined)))
  }
  const round2 = (x) => (x === undefined ? null : Math.round(x * 100) / 100)
  const c = agg("ceiling")
  const tw = agg("twin")
  const floorBase = (name) => ({ ...agg(name), ratio: round2(ratioIn(name, "ceiling")), vs: "ceiling" })
  const fl = floorBase("floor")
  const flMw = floorBase("floor-mw")
  const ablated = FLOOR_MW_WITHOUT.map((w) => [`floor-mw-${w}`, floorBase(`floor-mw-${w}`)])
  const scenarios = [
    { name: "S1", what: "GET modules (cached read)", ...agg("S1"), ratio: round2(ratioIn("S1", "ceiling")), vs: "ceiling" },
    { name: "S2", what: "GET forms (DB read)", ...agg("S2"), ratio: round2(ratioIn("S2", "twin")), vs: "twin" },
    { name: "S3", what: "POST forms (write + audit)", ...agg("S3"), ratio: round2(ratioIn("S3", "S2")), vs: "S2" },
    { name: "S4", what: "POST token/check", ...agg("S4"), ratio: round2(ratioIn("S4", "ceiling")), vs: "ceiling" },
    { name: "S5", what: `GET logs pages (${AUDIT_ROWS} entries)`, ...agg("S5"), ratio: null, vs: "" },
    { name: "S5-8", what: "GET logs pages, 8 connections", ...agg("S5-8"), ratio: null, vs: "" },
    {
      name: "S6",
      what: "1,000 cold requests, 50 users",
      rps: s6.rps,
      p50_ms: null,
      p99_ms: null,
      non2xx: s6.non2xx,
      ratio: null,
      vs: "",
      upstream_calls: s6.upstream_calls,
      upstream_429: s6.upstream_429,
      distinct_resources: s6.distinct_resources
    },
    {
      name: "S7",
      what: "start-up to /readyz; RSS after load",
      rps: null,
      p50_ms: null,
      p99_ms: null,
      startup_ms: Math.round(median(starts)),
      startup_all_ms: starts.map((s) => Math.round(s)),
      rss_mib: rss,
      // MiB: { rss, peak, private, file, parts: smaps by mapping, v8: heap spaces (bench/heap-spaces.mjs) }.
      memory_after_load_mib: memory,
      memory_at_ready_mib: readyMemory,
      // The same, BENCH_SETTLE_SECONDS (30; quick 5) after the last window, the gateway idle meanwhile.
      settle_seconds: SETTLE,
      rss_settled_mib: settled.rss ?? rssMiB(gateway.pid),
      memory_settled_mib: settled,
      ratio: null,
      vs: ""
    }
  ].map((s) => ({ ...s, rss_mib: s.rss_mib ?? rss }))
  const out = {
    mode: quick ? "quick" : "full",
    when: new Date().toISOString(),
    machine: { node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, mem_gib: Math.round(totalmem() / 2 ** 30) },
    settings: { rounds: ROUNDS, seconds: SECONDS, warmup: WARMUP, connections: CONNECTIONS, log_level: LOG_LEVEL, database: databaseUrl ? "postgresql" : "pglite", audit_rows: AUDIT_ROWS },
    baselines: { ceiling: c, floor: fl, "floor-mw": flMw, ...Object.fromEntries(ablated), twin: twinBase ? tw : null },
    scenarios
  }
  mkdirSync(join(root, "bench/results"), { recursive: true })
  writeFileSync(join(root, "bench/results", quick ? "quick.json" : "latest.json"), JSON.stringify(out, null, 2) + "\n")

  const fmt = (x, w) => String(x ?? "–").padStart(w)
  const cpuCol = (x) => fmt(x === null || x === undefined ? "" : x, 8)
  const baseLine = (what, b, ratio = "") =>
    `${"base".padEnd(4)} ${what.padEnd(38)} ${fmt(b.rps, 8)} ${fmt(b.p50_ms, 8)} ${fmt(b.p99_ms, 8)} ${fmt(ratio, 12)} ${fmt(b.non2xx, 7)} ${cpuCol(b.cpu_us_per_req)}${b.db_cpu_us_per_req == null ? "" : `  PostgreSQL ${b.db_cpu_us_per_req} µs/req`}`
  const lines = [
    `${"".padEnd(4)} ${"scenario".padEnd(38)} ${fmt("rps", 8)} ${fmt("p50 ms", 8)} ${fmt("p99 ms", 8)} ${fmt("ratio", 12)} ${fmt("errors", 7)} ${fmt("µs/req", 8)}  other`,
    baseLine("ceiling (node:http, S1 answer)", c),
    baseLine("floor (Effect HttpApi, S1 answer)", fl, fl.ratio === null ? "" : `${fl.ratio}× ceiling`),
    baseLine("floor-mw (floor + our middleware)", flMw, flMw.ratio === null ? "" : `${flMw.ratio}× ceiling`),
    ...ablated.map(([name, b]) => baseLine(`floor-mw without ${name.slice("floor-mw-".length)}`, b, b.ratio === null ? "" : `${b.ratio}× ceiling`)),
    ...(twinBase ? [baseLine("twin (Fastify + pg, S2)", tw)] : []),
    ...scenarios.map((s) => {
      const other = s.name === "S6"
        ? `upstream calls ${s.upstream_calls} (distinct ${s.distinct_resources}), 429s ${s.upstream_429}`
        : s.name === "S7"
        ? `start-up ${s.startup_ms} ms (${s.startup_all_ms.join(", ")}), RSS after load ${s.rss_mib} MiB, ${s.settle_seconds} s later ${s.rss_settled_mib} MiB`
        : s.db_cpu_us_per_req == null
        ? ""
        : `PostgreSQL ${s.db_cpu_us_per_req} µs/req`
      return `${s.name.padEnd(4)} ${s.what.padEnd(38)} ${fmt(s.rps, 8)} ${fmt(s.p50_ms, 8)} ${fmt(s.p99_ms, 8)} ${fmt(s.ratio === null ? "" : `${s.ratio}× ${s.vs}`, 12)} ${fmt(s.non2xx, 7)} ${cpuCol(s.cpu_us_per_req)}  ${other}`
    }),
    "",
    `S7 memory at ready (MiB): ${memoryLine(readyMemory)}`,
    `S7 memory after load (MiB): ${memoryLine(memory)}`,
    `S7 memory ${SETTLE} s after load (MiB): ${memoryLine(settled)}`
  ]
  process.stdout.write(`\n${lines.join("\n")}\n\n`)

  await Promise.all([stop(gateway), stop(ceiling), ...Object.values(floors).map((f) => stop(f.child)), ...(twin ? [stop(twin)] : [])])
  if (databaseUrl) await dropDatabase()
  rmSync(workDir, { recursive: true, force: true })

  // S8–S10, feed delivery (bench/delivery.mjs): its own API, workers and database, once the gateway
  // above has stopped. Needs PostgreSQL (the processes share it).
  let delivery
  if (!databaseUrl) log("WARNING: no PostgreSQL: S8–S10 skipped")
  else if (only === undefined || only.some((n) => ["S8", "S9", "S10"].includes(n))) {
    delivery = await runDelivery(quick).catch((e) => ({ failures: [`S8–S10: ${e.message}`] }))
    if (delivery.S10 !== undefined) {
      out.delivery = delivery
      writeFileSync(join(root, "bench/results", quick ? "quick.json" : "latest.json"), JSON.stringify(out, null, 2) + "\n")
      process.stdout.write(`${deliveryLines(delivery).join("\n")}\n\n`)
    }
  }

  // S11, forms filled through signed interactions while S8's polling runs (bench/forms.mjs): its own gateway and database.
  let forms
  if (databaseUrl && (only === undefined || only.includes("S11"))) {
    forms = await runForms(quick).catch((e) => ({ error: e.message }))
    if (forms.error === undefined) {
      out.forms = forms
      writeFileSync(join(root, "bench/results", quick ? "quick.json" : "latest.json"), JSON.stringify(out, null, 2) + "\n")
      process.stdout.write(`${formsLines(forms).join("\n")}\n\n`)
    }
  }

  // Quick mode (CI) asserts that every scenario ran, not how fast.
  const failures = [...(delivery?.failures ?? []), ...(forms === undefined ? [] : forms.error !== undefined ? [`S11: ${forms.error}`] : formsFailures(forms))]
  for (const s of scenarios.slice(0, 5)) {
    if (!(s.rps > 0) && (only === undefined || only.includes(s.name))) failures.push(`${s.name} measured no requests`)
    // A scenario answered with errors measures the error path, not the scenario.
    if (s.non2xx > 0) failures.push(`${s.name}: ${s.non2xx} answers were not 2xx`)
  }
  if (!(c.rps > 0) && only === undefined) failures.push("the ceiling measured no requests")
  for (const [name, b] of [["floor", fl], ["floor-mw", flMw], ...ablated]) {
    if (!(b.rps > 0) && selected(name)) failures.push(`the ${name} measured no requests`)
    if (b.non2xx > 0) failures.push(`${name}: ${b.non2xx} answers were not 2xx`)
  }
  if (twinBase && !(tw.rps > 0) && only === undefined) failures.push("the twin measured no requests")
  if (s6.requests !== 1000 || s6.non2xx > 0) failures.push(`S6: ${s6.non2xx} of ${s6.requests} requests failed`)
  if (!(starts.length > 0)) failures.push("S7 did not start")
  if (failures.length > 0) {
    process.stderr.write(`bench FAILED:\n  ${failures.join("\n  ")}\n`)
    process.exitCode = 1
  }
  log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
}

main().catch((e) => {
  process.stderr.write(`bench FAILED: ${e.stack ?? e}\n`)
  process.exitCode = 1
  cleanup()
})
