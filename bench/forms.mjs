// S11 (bench/README.md), run by bench/run.mjs after S8–S10 or alone:
//   node bench/forms.mjs [--quick]      (after `node scripts/build.mjs`)
// One gateway, ROLE=all, sandbox mode, on a fresh PostgreSQL database `gateway_bench_forms` (dropped at
// the end). S8's polling runs in it meanwhile (its sources × 5 feeds answering 304 every 2 s, seeded as
// bench/delivery.mjs seeds S8). Then N members (the sandbox's extra users) each fill a 3-page form at
// once through the sandbox's member player (`POST /sandbox/discord/interactions`: it signs every
// interaction with the bot's Ed25519 key, sends it to the gateway's endpoint and checks its answer as
// the platform does): /submit, the select, page 1, Continue, page 2, Continue, page 3.
// - Interaction answers: the player's `elapsed_ms` (signed request sent → answer read), p50 / p99, and
//   per step (`by_step`); failed = not 200, `problems` not empty, or no answer within the platform's 3 s.
//   The signer keeps one connection per member, opened first (one untimed PING each; BENCH_S11_COLD=1: not).
// - Review messages: the sandbox's time of the bot's post in the authorization channel minus the
//   time the member's last page was answered, p50 / p99 (same clock: one machine).
// - Processes (BENCH_S11_SANDBOX): `apart` (default with the signer) runs the sandbox, i.e. the platform and
//   the RSS sources, in a process of its own (`ROLE=api`, sandbox mode, on the same database: the one that
//   also takes the setup's API calls), and the gateway measured (`ROLE=all`, `PUBLIC_URL` at the sandbox's
//   process) does only the gateway's work, as S8–S10 run; `inprocess` runs both in the gateway's process,
//   as every run before 2026-12-02 (fifth session) did. The player driver always runs in process.
// Prints one JSON line (the results) on stdout.
import { spawn } from "node:child_process"
import http from "node:http"
import { createHash, createPrivateKey, randomBytes, sign } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { nodeFlags } from "../scripts/node-flags.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const quick = process.argv.includes("--quick")
const num = (name, fallback) => (process.env[name] !== undefined ? Number(process.env[name]) : fallback)
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const DB = process.env.BENCH_FORMS_DB ?? "gateway_bench_forms"
const MEMBERS = num("BENCH_S11_MEMBERS", quick ? 10 : 100)
const S8_SOURCES = num("BENCH_S8_SOURCES", quick ? 60 : 2000)
const UA = "gateway-bench/1.0"
const BOT1 = "200000000000000001"
const BOT1_TOKEN = "sandbox-bot-1.token"
const S1 = "300000000000000001"
const ALICE = "100000000000000001"
const CHANNEL = "310000000000000102"
const MODERATORS = "320000000000000101"
const memberId = (i) => `11${String(i).padStart(16, "0")}`
// `signer` (default): this script signs the interactions as the platform does (the sandbox bot's key is
// derived from its id: src/sandbox/interactions/BotKeys.ts) and times the gateway's answer itself, so the
// gateway's process does only the gateway's work. `player`: the sandbox's member player (in the gateway's
// process) sends them and checks every answer against the platform's rules.
const DRIVER = process.env.BENCH_S11_DRIVER ?? "signer"
// The platform sends interactions over connections it keeps open (HTTP keep-alive): the signer holds at
// most one connection per member (a keep-alive agent), opened before the fill, one PING each, untimed.
// BENCH_S11_COLD=1 sends with fetch as before, whose pool opens connections as it goes (~100 in the
// first burst, more later): their first requests then wait for a busy gateway to accept them (libuv
// accepts one connection per event-loop iteration), and that wait is most of the p99 (bench/README.md, S11).
const COLD = process.env.BENCH_S11_COLD === "1"
const APART = DRIVER === "signer" && (process.env.BENCH_S11_SANDBOX ?? "apart") !== "inprocess"
// BENCH_S11_WARMUP: members who fill a warm-up form first, untimed (its review messages posted before
// the measured fill), as a gateway in production has run these code paths before. Default 0: the
// first burst runs on a fresh process, as every run before; the goal is met without it (bench/README.md).
const WARMUP = Math.min(num("BENCH_S11_WARMUP", 0), MEMBERS)
const agent = new http.Agent({ keepAlive: true, maxSockets: MEMBERS })
/** POSTs `body`: its status and text, over the members' kept connections (or fetch's pool when COLD). */
const post = (url, headers, body) =>
  COLD
    ? fetch(url, { method: "POST", headers, body }).then(async (res) => ({ status: res.status, text: await res.text() }))
    : new Promise((resolve, reject) => {
      const req = http.request(url, { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
        const chunks = []
        res.on("data", (chunk) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body)
    })
const botKey = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), createHash("sha256").update(`sandbox-interactions-key:${BOT1}`).digest()]),
  format: "der",
  type: "pkcs8"
})
let sequence = 0n
/** An interaction as the platform sends it, signed; the answer in the player's shape. */
const signed = async (base, userId, type, data, message) => {
  const body = JSON.stringify({
    id: String(380000000000000000n + (sequence += 1n)), application_id: BOT1, type, token: randomBytes(24).toString("base64url"), version: 1,
    guild_id: S1, channel_id: CHANNEL, app_permissions: "2248473465835073",
    member: { user: { id: userId, username: `load${Number(userId.slice(2))}`, global_name: `Load ${Number(userId.slice(2))}`, avatar: null, discriminator: "0" }, roles: [MODERATORS], permissions: "8192", nick: null },
    ...(data === undefined ? {} : { data }), ...(message === undefined ? {} : { message: { id: message, channel_id: CHANNEL } })
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = sign(null, Buffer.from(timestamp + body), botKey).toString("hex")
  const started = performance.now()
  const res = await post(`${base}/interactions/${BOT1}`, {
    "content-type": "application/json", "x-signature-ed25519": signature, "x-signature-timestamp": timestamp, "user-agent": "Discord-Interactions/1.0"
  }, body)
  const text = res.text
  const elapsed = Math.round(performance.now() - started)
  const response = res.status === 200 ? JSON.parse(text) : null
  return {
    status: 200,
    text,
    json: () => ({ response, elapsed_ms: elapsed, message_id: "1", problems: [...(res.status === 200 ? [] : [`answered HTTP ${res.status}`]), ...(elapsed > 3000 ? ["no answer within 3 s"] : [])] })
  }
}
/** The player's body, sent by this script's signer. */
const bySigner = (base, userId, body) => {
  if (body.action === "command") return signed(base, userId, 2, { id: "1", name: "submit", type: 1 })
  if (body.action === "select") return signed(base, userId, 3, { custom_id: body.custom_id, component_type: 3, values: body.values }, body.message_id)
  if (body.action === "click") return signed(base, userId, 3, { custom_id: body.custom_id, component_type: 2 }, body.message_id)
  return signed(base, userId, 5, {
    custom_id: body.modal,
    components: Object.entries(body.fields).map(([custom_id, value]) => ({ type: 18, id: 1, component: { type: 4, id: 2, custom_id, value } }))
  })
}

const t0 = performance.now()
const log = (msg) => process.stderr.write(`[forms ${((performance.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const quantile = (xs, q) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
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

const call = async (url, { method = "GET", token, bot, body } = {}) => {
  const res = await fetch(url, {
    method,
    headers: {
      "user-agent": UA,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(bot ? { authorization: `Bot ${bot}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) }
}
const pool = async (items, n, f) => {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      await f(items[i], i)
    }
  }))
}
const signIn = async (base, userId) => {
  const login = await fetch(`${base}/auth/idp/login?redirect_uri=${encodeURIComponent("http://127.0.0.1:9/callback")}&state=b`, {
    redirect: "manual",
    headers: { "user-agent": UA }
  })
  const cookie = login.headers.get("set-cookie").split(";")[0]
  const authorize = await fetch(`${login.headers.get("location")}&login_hint=${userId}`, { redirect: "manual" })
  const callback = await fetch(authorize.headers.get("location"), { redirect: "manual", headers: { cookie, "user-agent": UA } })
  const code = new URL(callback.headers.get("location")).searchParams.get("code")
  const token = await fetch(`${base}/auth/idp/token`, { method: "POST", headers: { authorization: code, "user-agent": UA } })
  if (token.status !== 200) throw new Error(`token answered ${token.status}: ${await token.text()}`)
  return (await token.json()).access_token
}

let gateway
const children = []
const METRICS_TOKEN = "bench-metrics-token"
/** The gateway's RSS polls so far (`upstream_requests_total{platform="rss"}` on /metrics). */
const rssPolls = async (base) => {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, "user-agent": UA } })
  if (res.status !== 200) return null
  let total = 0
  for (const line of (await res.text()).split("\n")) {
    if (line.startsWith("upstream_requests_total{") && line.includes('platform="rss"')) total += Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  return total
}
/** utime + stime of a `/proc/<pid>/stat` line, in seconds (clock ticks of 100 Hz). */
const statCpuSeconds = (stat) => {
  const fields = stat.split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}
/** A child process's CPU, in seconds. */
const cpuSeconds = (child) => statCpuSeconds(readFileSync(`/proc/${child.pid}/stat`, "utf8"))
/** The CPU of every PostgreSQL process of the machine (its backends, checkpointer, WAL writer), in seconds. */
const postgresCpuSeconds = () => {
  let total = 0
  for (const pid of readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      if (stat.includes("(postgres)")) total += statCpuSeconds(stat)
    } catch {
      // gone meanwhile
    }
  }
  return total
}
/** This script's own CPU (the signer: signing, sending, timing), in seconds. */
const selfCpuSeconds = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}
const cleanup = () => children.forEach((c) => c.kill("SIGKILL"))
process.on("exit", cleanup)

/** S8's polling in the gateway: sources × 5 feeds (one over the API, the rest copied in SQL), first polls queued. */
const seedPolling = async (base, db, databaseUrl, alice) => {
  const hooks = []
  for (let i = 0; i < 5; i++) {
    const r = await call(`${base}/sandbox/discord/api/v10/channels/310000000000000103/webhooks`, { method: "POST", bot: BOT1_TOKEN, body: { name: `S8 ${i}` } })
    if (r.status !== 200) throw new Error(`creating a webhook answered ${r.status}: ${r.text}`)
    const w = r.json()
    hooks.push(`${base}/sandbox/discord/api/v10/webhooks/${w.id}/${w.token}`)
  }
  const name = (i) => `s11-${i}`
  await pool(Array.from({ length: S8_SOURCES }, (_, i) => i), 16, async (i) => {
    const r = await call(`${base}/sandbox/sources/rss/${name(i)}/events`, { method: "POST", body: { type: "post", title: `Item ${i}`, url: `https://example.com/s11/${i}/0` } })
    if (r.status !== 201) throw new Error(`publishing answered ${r.status}: ${r.text}`)
  })
  for (const hook of hooks) {
    const r = await call(`${base}/api/v1/bots/${BOT1}/servers/${S1}/modules/rss/feeds`, { method: "POST", token: alice, body: { feed_identifier: `${base}/sandbox/rss/${name(0)}.xml`, webhook_url: hook } })
    if (r.status !== 200) throw new Error(`creating a feed answered ${r.status}: ${r.text}`)
  }
  const { rows: [{ feed_identifier: stored0 }] } = await db.query(`SELECT DISTINCT feed_identifier FROM feeds WHERE feed_identifier LIKE '%/${name(0)}.xml'`)
  await db.query(
    `INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options, display_info, webhook_id,
       webhook_token_enc, webhook_name, webhook_avatar, webhook_channel_id)
     SELECT f.bot_id, f.server_id, f.module, replace(f.feed_identifier, $1, '/s11-' || g || '.xml'), f.webhook_options,
       f.display_info, f.webhook_id, f.webhook_token_enc, f.webhook_name, f.webhook_avatar, f.webhook_channel_id
     FROM feeds f, generate_series(1, $2::int - 1) AS g WHERE f.feed_identifier = $3`,
    [`/${name(0)}.xml`, S8_SOURCES, stored0]
  )
  await db.query(`INSERT INTO feed_sources (module, identifier) SELECT DISTINCT module, feed_identifier FROM feeds
    WHERE module = 'rss' AND feed_identifier LIKE '%/s11-%' ON CONFLICT DO NOTHING`)
  const { PgBoss } = await import("pg-boss")
  const boss = new PgBoss({ connectionString: databaseUrl, schema: "pgboss", migrate: false, supervise: false, schedule: false, max: 2 })
  boss.on("error", (e) => log(`pg-boss (seeding): ${e.message}`))
  await boss.start()
  const { rows } = await db.query(`SELECT id FROM feed_sources WHERE identifier LIKE '%/s11-%'`)
  for (let i = 0; i < rows.length; i += 1000) await boss.insert("feed-poll", rows.slice(i, i + 1000).map((r) => ({ data: { sourceId: String(r.id) } })))
  await db.query(`UPDATE feed_sources SET next_poll_at = now() WHERE identifier LIKE '%/s11-%'`)
  await boss.stop({ graceful: false, close: true })
  const baselined = async () => (await db.query(`SELECT count(*)::int AS n FROM feed_sources WHERE identifier LIKE '%/s11-%' AND baselined_at IS NOT NULL`)).rows[0].n
  const deadline = Date.now() + (quick ? 120_000 : 900_000)
  while ((await baselined()) < S8_SOURCES) {
    if (Date.now() > deadline) throw new Error("S8's baseline polls did not finish")
    await sleep(500)
  }
  return rows.length
}

/** One member through the player: every answer's time, its failures, and when the last page was answered. */
const fillForm = async (base, userId, formId) => {
  const times = []
  /** Each answer's time by step: command, select, page1, continue1, page2, continue2, page3. */
  const bySteps = {}
  let pagesSent = 0
  let continues = 0
  const failures = []
  const play = async (body) => {
    const r = DRIVER === "player"
      ? await call(`${base}/sandbox/discord/interactions`, { method: "POST", body: { bot_id: BOT1, user_id: userId, guild_id: S1, channel_id: CHANNEL, ...body, modal: undefined } })
      : await bySigner(base, userId, body)
    if (r.status !== 200) {
      failures.push(`${body.action} answered ${r.status}: ${r.text.slice(0, 200)}`)
      return undefined
    }
    const a = r.json()
    if (a.elapsed_ms !== null) {
      times.push(a.elapsed_ms)
      const step = body.action === "submit" ? `page${++pagesSent}` : body.action === "click" ? `continue${++continues}` : body.action
      ;(bySteps[step] ??= []).push(a.elapsed_ms)
    }
    if (a.problems.length > 0) failures.push(`${body.action}: ${a.problems.join("; ")}`)
    // No answer the platform would take (late, not 200): the member sees "This interaction failed".
    return a.response === null || a.problems.length > 0 ? undefined : a
  }
  const button = (a) => a?.response?.data?.components?.[0]?.components?.find((c) => c.type === 2)
  const fields = (a, page) => Object.fromEntries(a.response.data.components.filter((c) => c.type === 18).map((c) => [c.component.custom_id, `answer ${page} of ${userId}`]))
  let a = await play({ action: "command", name: "submit" })
  if (a === undefined) return { times, bySteps, failures }
  a = await play({ action: "select", custom_id: "f:pick", message_id: a.message_id, values: [String(formId)] })
  for (let page = 1; page <= 3 && a !== undefined; page++) {
    if (a.response.type !== 9) {
      failures.push(`page ${page}: no modal (${JSON.stringify(a.response).slice(0, 200)})`)
      return { times, bySteps, failures }
    }
    a = await play({ action: "submit", modal: a.response.data.custom_id, fields: fields(a, page) })
    if (page < 3 && a !== undefined) a = await play({ action: "click", custom_id: button(a)?.custom_id, message_id: a.message_id })
  }
  const done = Date.now()
  if (a !== undefined && !String(a.response.data?.content).startsWith("Submitted")) failures.push(`the last page: ${JSON.stringify(a.response).slice(0, 200)}`)
  return { times, bySteps, failures, done }
}

const main = async () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${DB}`)
  await admin.end()
  const dbUrl = new URL(ADMIN_URL)
  dbUrl.pathname = `/${DB}`
  const databaseUrl = dbUrl.toString()
  const workDir = mkdtempSync(join(tmpdir(), "gateway-bench-forms-"))
  // The gateway measured, and (APART) the sandbox's process: the platform, the sources, the setup's API.
  const port = await freePort()
  const gatewayBase = `http://127.0.0.1:${port}`
  const sandboxPort = APART ? await freePort() : port
  const base = `http://127.0.0.1:${sandboxPort}`
  const db = new pg.Client({ connectionString: databaseUrl })
  const loads = [loadavg()[0]]
  const loadTimer = setInterval(() => loads.push(loadavg()[0]), 5000)
  const key = `k1:${randomBytes(32).toString("base64")}`
  const start = async (name, { port, role, dataDir, nodeArgs = [] }) => {
    let tail = ""
    const child = spawn(process.execPath, [...nodeFlags, ...nodeArgs, process.env.BENCH_MAIN ?? "dist/main.mjs"], {
      cwd: root,
      env: {
        ...process.env, PORT: String(port), HOST: "127.0.0.1", SANDBOX: "true", PUBLIC_URL: base, ROLE: role, DATA_DIR: dataDir,
        TOKEN_ENCRYPTION_KEY: key, DATABASE_URL: databaseUrl, DISCORD_CLIENT_ID: "", REDIS_URL: "",
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "Warn", FEED_POLL_INTERVAL_SECONDS: "2", METRICS_TOKEN, SANDBOX_EXTRA_USERS: String(MEMBERS),
        RATE_LIMIT_API_PER_MINUTE: "100000000", RATE_LIMIT_AUTH_PER_HOUR: "100000000"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const keep = (chunk) => (tail = (tail + chunk.toString()).slice(-6000))
    child.stdout.on("data", keep)
    child.stderr.on("data", keep)
    const deadline = Date.now() + 120_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the ${name} exited ${child.exitCode}\n${tail}`)
      if (Date.now() > deadline) throw new Error(`the ${name} was not ready within 120 s\n${tail}`)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)
      if (ready) return child
      await sleep(100)
    }
  }
  try {
    // The sandbox's process first: it migrates the database.
    if (APART) {
      mkdirSync(join(workDir, "sandbox"))
      await start("sandbox's process", { port: sandboxPort, role: "api", dataDir: join(workDir, "sandbox") })
    }
    // BENCH_GATEWAY_NODE_ARGS: more flags for the gateway (e.g. --cpu-prof --cpu-prof-dir=<dir>), the last of a flag wins.
    const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter((a) => a !== "")
    gateway = await start("gateway", { port, role: "all", dataDir: workDir, nodeArgs })
    await db.connect()
    const alice = await signIn(base, ALICE)
    const polled = await seedPolling(base, db, databaseUrl, alice)
    log(`S8's polling: ${polled} sources × 5 feeds, every source baselined`)
    // Three pages of five short questions.
    const steps = Array.from({ length: 15 }, (_, i) => ({ type: "message", string: `Question ${i + 1}?`, char_limit: [1, 100] }))
    const form = await call(`${base}/api/v1/bots/${BOT1}/servers/${S1}/modules/forms`, {
      method: "POST", token: alice, body: { title: "S11 application", workflow_live: true, channel_id: CHANNEL, role_mentions: [MODERATORS], steps }
    })
    if (form.status !== 200) throw new Error(`creating the form answered ${form.status}: ${form.text}`)
    const formId = form.json().workflow_id
    if (DRIVER === "signer" && !COLD) {
      const pongs = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => signed(gatewayBase, memberId(i + 1), 1)))
      if (pongs.some((p) => p.json().response?.type !== 1)) throw new Error("a PING opening a member's connection was not answered PONG")
    }
    if (WARMUP > 0) {
      const warm = await call(`${base}/api/v1/bots/${BOT1}/servers/${S1}/modules/forms`, {
        method: "POST", token: alice, body: { title: "S11 warm-up", workflow_live: true, channel_id: CHANNEL, role_mentions: [MODERATORS], steps }
      })
      if (warm.status !== 200) throw new Error(`creating the warm-up form answered ${warm.status}: ${warm.text}`)
      await Promise.all(Array.from({ length: WARMUP }, (_, i) => fillForm(gatewayBase, memberId(i + 1), warm.json().workflow_id)))
      // Its review messages posted, and the bot's global budget full again, before the measured fill.
      for (const until = Date.now() + 60_000; Date.now() < until; await sleep(250)) {
        const r = await call(`${base}/sandbox/discord/messages?channel_id=${CHANNEL}`)
        if (r.json().messages.filter((m) => m.body.embeds?.[0]?.title === "S11 warm-up").length >= WARMUP) break
      }
      await sleep(2000)
      log(`warm-up: ${WARMUP} members filled a form of their own first (untimed)`)
    }
    const polls0 = await rssPolls(gatewayBase)
    const cpu0 = children.map(cpuSeconds)
    const pgCpu0 = postgresCpuSeconds()
    const selfCpu0 = selfCpuSeconds()
    const started = performance.now()
    const members = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => fillForm(gatewayBase, memberId(i + 1), formId)))
    const fillSeconds = (performance.now() - started) / 1000
    const cpu1 = children.map(cpuSeconds)
    const pgCpu1 = postgresCpuSeconds()
    const selfCpu1 = selfCpuSeconds()
    const polls1 = await rssPolls(gatewayBase)
    const times = members.flatMap((m) => m.times)
    const failures = members.flatMap((m) => m.failures)
    log(`${MEMBERS} members filled the form in ${fillSeconds.toFixed(1)} s: ${times.length} answers, ${failures.length} failed`)
    // The review messages: one per member, in the authorization channel, by the member's name.
    const doneAt = new Map(members.map((m, i) => [`Load ${i + 1}`, m.done]))
    let reviews = []
    const until = Date.now() + 60_000
    while (Date.now() < until) {
      const r = await call(`${base}/sandbox/discord/messages?channel_id=${CHANNEL}`)
      reviews = r.json().messages.filter((m) => m.ephemeral_for == null && (m.edits[0]?.body ?? m.body).embeds?.[0]?.title === "S11 application")
      if (reviews.length >= MEMBERS) break
      await sleep(250)
    }
    const delays = reviews.flatMap((m) => {
      const done = doneAt.get((m.edits[0]?.body ?? m.body).embeds[0].author?.name)
      return done === undefined ? [] : [Date.parse(m.at) - done]
    })
    // Why the review p99 is what it is: how close together the last pages came, and the posting rate
    // (the channel's bucket: its posts go one after another; the bot's global budget: 50 in any 1.2 s).
    const lastPages = [...doneAt.values()]
    const postedAt = reviews.map((m) => Date.parse(m.at))
    const spanMs = (xs) => (xs.length < 2 ? 0 : Math.max(...xs) - Math.min(...xs))
    const slow = times.filter((t) => t > 3000).length
    if (process.env.BENCH_S11_DUMP) {
      const first = Math.min(...lastPages)
      writeFileSync(process.env.BENCH_S11_DUMP, JSON.stringify({ lastPages: lastPages.map((t) => t - first).sort((a, b) => a - b), posted: postedAt.map((t) => t - first).sort((a, b) => a - b) }))
    }
    // p50 / p99 of each step's answers (where the time goes: the start, a page, a Continue, the last page).
    const stepNames = ["command", "select", "page1", "continue1", "page2", "continue2", "page3"]
    const by_step = Object.fromEntries(stepNames.map((name) => {
      const xs = members.flatMap((m) => m.bySteps[name] ?? [])
      return [name, { n: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) }]
    }))
    const result = {
      driver: DRIVER,
      sandbox: APART ? "apart" : "in process",
      connections: DRIVER === "signer" && !COLD ? "warm" : "cold",
      members: MEMBERS,
      warmup_members: WARMUP,
      pages: 3,
      s8_sources: polled,
      answers: times.length,
      answer_p50_ms: quantile(times, 0.5),
      answer_p99_ms: quantile(times, 0.99),
      answer_max_ms: quantile(times, 1),
      by_step,
      failed: failures.length + slow,
      failures: failures.slice(0, 5),
      review_messages: reviews.length,
      review_p50_ms: quantile(delays, 0.5),
      review_p99_ms: quantile(delays, 0.99),
      last_pages_span_ms: spanMs(lastPages),
      review_posts_per_s: postedAt.length < 2 ? null : Math.round((postedAt.length - 1) / (spanMs(postedAt) / 1000)),
      fill_seconds: Math.round(fillSeconds * 10) / 10,
      polls_per_s_meanwhile: polls0 === null || polls1 === null ? null : Math.round((polls1 - polls0) / fillSeconds),
      // CPU seconds during the fill: the gateway's process, the sandbox's when apart, PostgreSQL's
      // processes (every one of the machine's cluster) and this script (the members' driver).
      cpu_s_during_fill: {
        gateway: Math.round((cpu1.at(-1) - cpu0.at(-1)) * 100) / 100,
        ...(APART ? { sandbox: Math.round((cpu1[0] - cpu0[0]) * 100) / 100 } : {}),
        postgres: Math.round((pgCpu1 - pgCpu0) * 100) / 100,
        driver: Math.round((selfCpu1 - selfCpu0) * 100) / 100
      },
      load1: { min: Math.min(...loads), max: Math.max(...loads) }
    }
    log(`S11: answers p50 ${result.answer_p50_ms} ms, p99 ${result.answer_p99_ms} ms, ${result.failed} failed; review messages ${reviews.length}/${MEMBERS}, p50 ${result.review_p50_ms} ms, p99 ${result.review_p99_ms} ms after the last page`)
    process.stdout.write(`${JSON.stringify(result)}\n`)
  } finally {
    clearInterval(loadTimer)
    await db.end().catch(() => {})
    for (const child of children) child.kill("SIGTERM")
    // A CPU profile is written at exit: give the gateway time to stop.
    for (let i = 0; i < 100 && children.some((c) => c.exitCode === null && c.signalCode === null); i++) await sleep(100)
    const admin2 = new pg.Client({ connectionString: ADMIN_URL })
    await admin2.connect()
    await admin2.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {})
    await admin2.end()
    rmSync(workDir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stderr.write(`S11 FAILED: ${e.stack ?? e}\n`)
  process.exitCode = 1
})
