/**
 * Several workers on one PostgreSQL (delivery.md §6), as an operator runs them: one `ROLE=api`
 * process and three `ROLE=worker` processes of the bundle on a fresh database, 300 rss feeds over
 * 60 sources, 15 webhooks. One worker is killed with SIGKILL while a round of items is on its way.
 * - Every published item is posted exactly once per matching feed (the sandbox's webhook inbox);
 *   a message whose send the dead worker had begun is either in the inbox once or recorded failed
 *   "unknown whether it was posted" (spec §4: never twice, never dropped silently).
 * - Each source is polled once per interval: every fetch of a source's feed falls in a slot of
 *   its own (the sources' slots are spread over the interval, delivery.md §1), the dead worker's
 *   polls included (a poll job run again for a slot already polled does not fetch).
 *
 * Where the sandbox lives: in the API process (sandbox mode mounts it there). Each worker runs in
 * sandbox mode with `PUBLIC_URL` set to the API's URL, so its chat-platform client and source
 * clients talk to the API's sandbox, and it shares the API's `TOKEN_ENCRYPTION_KEY` and
 * `DATABASE_URL`. The feeds' rss URLs point at a counting tap in this test that forwards to the
 * sandbox (the sandbox's own stats count calls per route, not per feed).
 * Feeds are seeded in the database (as the feeds service stores them) with the sources the
 * migration would create; the workers' repair pass at start polls them (a first poll sent by the
 * API on a create is covered by Roles.test.ts). Needs TEST_DATABASE_URL (PGlite is one process's).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createServer, request } from "node:http"
import type { Server } from "node:http"
import { join } from "node:path"
import { freePort } from "../utils/FreePort.ts"
import { BOT2_ID, BOT2_TOKEN, CHANNEL_INDEX, channelId, S1_ID } from "../../src/sandbox/Seed.ts"
import { Cipher, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { UNKNOWN } from "../../src/services/delivery/DeliveryReconcile.ts"
import { slotOffset } from "../../src/services/delivery/DeliveryQueues.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Exit as ProcessExit } from "../utils/ChildProcesses.ts"
import { ROOT, sharedBundle, sleep } from "./SpawnFixtures.ts"

let OUT = ""
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? ""
const KEY = "k1:" + Buffer.alloc(32, 9).toString("base64")
const UA = { "user-agent": "several-workers-test" }
const SOURCES = 60
const FEEDS_PER_SOURCE = 5
const WEBHOOKS = 15
/** The poll interval (seconds): short, so rounds take seconds; long enough for 60 sources on a loaded 2-core machine. */
const INTERVAL = 4

// ---------------------------------------------------------------------------------------------
// Processes

interface Proc {
  readonly name: string
  readonly child: ChildProcess
  readonly url: string
  readonly output: () => string
  readonly exited: Promise<ProcessExit>
}

// The processes, and the rest undone after them: their data folders, the database, the tap.
const processes = childProcesses()

const start = (name: string, port: number, env: Record<string, string>): Proc => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const v of Object.keys(base)) {
    if (v.startsWith("FEED_") || v.startsWith("JOB_")) delete base[v]
  }
  for (const v of ["DATABASE_URL", "REDIS_URL", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "ROLE", "OTEL_EXPORTER_OTLP_ENDPOINT", "METRICS_TOKEN"]) {
    delete base[v]
  }
  const dataDir = processes.tempDir(`gateway-${name}-`)
  const { child, exited, output } = processes.spawn(process.execPath, [join(OUT, "main.mjs")], {
    cwd: ROOT,
    env: { ...base, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "Warn", TOKEN_ENCRYPTION_KEY: KEY, ...env }
  })
  return { name, child, url: `http://127.0.0.1:${port}`, output: () => output().all, exited }
}

const waitReady = async (p: Proc, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && p.child.exitCode === null) {
    if (await fetch(`${p.url}/readyz`, { headers: UA }).then((r) => r.status === 200, () => false)) return
    await sleep(200)
  }
  assert.fail(`${p.name} not ready after ${timeoutMs} ms (exit ${p.child.exitCode})\n${p.output()}`)
}

/** Waits for `check` (polled every 250 ms) up to `timeoutMs`; fails with `what` and the detail `check` gives. */
const until = async (what: string, timeoutMs: number, check: () => Promise<true | string>) => {
  const deadline = Date.now() + timeoutMs
  let last: true | string = "never checked"
  while (Date.now() < deadline) {
    last = await check()
    if (last === true) return
    await sleep(250)
  }
  assert.fail(`timed out waiting for ${what}: ${last}`)
}

// ---------------------------------------------------------------------------------------------
// The database: a fresh one on the test server, dropped at the end

const freshDatabase = async (admin: string) => {
  const name = `gateway_workers_${randomBytes(6).toString("hex")}`
  const scope = Effect.runSync(Scope.make())
  const adminSql = await Effect.runPromise(PgClient.make({ url: Redacted.make(admin), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer), Scope.provide(scope)))
  await Effect.runPromise(adminSql.unsafe(`CREATE DATABASE ${name}`))
  const url = new URL(admin)
  url.pathname = `/${name}`
  const sql = await Effect.runPromise(PgClient.make({ url: Redacted.make(url.toString()), maxConnections: 2 }).pipe(Effect.provide(Reactivity.layer), Scope.provide(scope)))
  processes.onCleanUp(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const dropScope = Effect.runSync(Scope.make())
    const dropper = await Effect.runPromise(PgClient.make({ url: Redacted.make(admin), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer), Scope.provide(dropScope)))
    await Effect.runPromise(dropper.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
    await Effect.runPromise(Scope.close(dropScope, Exit.void))
  })
  return { url: url.toString(), sql }
}

const query = <A extends object>(sql: SqlClient.SqlClient, text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.runPromise(sql.unsafe<A>(text, params as Array<unknown>))

// ---------------------------------------------------------------------------------------------
// The tap: forwards to the API (the sandbox) and notes when each rss feed was fetched

const tap = async (target: number) => {
  const fetches = new Map<string, Array<number>>()
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.startsWith("/sandbox/rss/")) {
      const path = req.url.split("?")[0]!
      fetches.set(path, [...(fetches.get(path) ?? []), Date.now()])
    }
    const upstream = request({ host: "127.0.0.1", port: target, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
  )
  processes.onCleanUp(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${port}`, fetches }
}

// ---------------------------------------------------------------------------------------------
// The sandbox, as the test drives it

const json = async <A>(res: Response): Promise<A> => {
  const text = await res.text()
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${text}`)
  return JSON.parse(text) as A
}

/** A webhook of the feeds bot, created on the sandbox platform (waiting out its 429s). */
const createWebhook = async (api: string, channel: string, name: string): Promise<{ id: string; token: string }> => {
  for (;;) {
    const res = await fetch(`${api}/sandbox/discord/api/v10/channels/${channel}/webhooks`, {
      method: "POST",
      headers: { ...UA, authorization: `Bot ${BOT2_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name })
    })
    if (res.status === 429) {
      await sleep(Math.ceil(Number((await res.json() as { retry_after?: number }).retry_after ?? 1) * 1000))
      continue
    }
    return json(res)
  }
}

const publish = (api: string, feed: string, id: string, title: string, url: string) =>
  fetch(`${api}/sandbox/sources/rss/${feed}/events`, {
    method: "POST",
    headers: { ...UA, "content-type": "application/json" },
    body: JSON.stringify({ type: "post", id, title, url })
  }).then((r) => json(r))

interface InboxMessage {
  readonly webhook_id: string
  readonly body: { readonly content: string; readonly allowed_mentions?: unknown }
}
const inbox = async (api: string) =>
  (await json<{ messages: Array<InboxMessage> }>(await fetch(`${api}/sandbox/discord/messages`, { headers: UA }))).messages

// ---------------------------------------------------------------------------------------------
// Feeds: 5 per source. Feed 0 takes every item; feed k ≥ 1 only items whose title holds `topic<k>`.
// The item of source s in round r names topic 1 + (s + r) % 4: two feeds of five match it.

const feedName = (s: number) => `mw-${s}`
const tag = (s: number, k: number) => `s${s}k${k}`
const itemUrl = (r: number, s: number, j: number) => `https://items.test/r${r}/s${s}/i${j}`
const topicOf = (r: number, s: number, j: number) => 1 + (s + r + j) % 4
/** Publishes `perSource` items at every source for round `r`; what the inbox must then hold ("<feed tag> <url>"). */
const publishRound = async (api: string, r: number, perSource: number) => {
  const expected: Array<string> = []
  for (let s = 0; s < SOURCES; s++) {
    for (let j = 0; j < perSource; j++) {
      const topic = topicOf(r, s, j)
      await publish(api, feedName(s), `r${r}-s${s}-i${j}`, `Round ${r} source ${s} item ${j} topic${topic}`, itemUrl(r, s, j))
      expected.push(`${tag(s, 0)} ${itemUrl(r, s, j)}`, `${tag(s, topic)} ${itemUrl(r, s, j)}`)
    }
  }
  return expected
}

/** "[s3k0] Round 1 …\nhttps://items.test/r1/s3" → "s3k0 https://items.test/r1/s3". */
const keyOf = (m: InboxMessage) => {
  const [header = "", url = ""] = m.body.content.split("\n")
  return `${/^\[(s\d+k\d+)\]/.exec(header)?.[1] ?? "?"} ${url}`
}

afterAll(processes.cleanUp)

describe("three workers and an API on one PostgreSQL", () => {
  if (TEST_DATABASE_URL === "") {
    console.warn("TEST_DATABASE_URL is not set: the several-workers test is skipped (it needs one database for four processes)")
  }
  it.skipIf(TEST_DATABASE_URL === "")(
    "300 feeds over 60 sources: each source polled once per interval, each item posted once per matching feed, also across a SIGKILL",
    async () => {
      OUT = await sharedBundle()
      const db = await freshDatabase(TEST_DATABASE_URL)
      const common = {
        DATABASE_URL: db.url,
        FEED_POLL_INTERVAL_SECONDS: String(INTERVAL),
        // A dead worker's jobs (no heartbeat for 10 s) go to the others at the next upkeep.
        JOB_UPKEEP_INTERVAL_SECONDS: "2"
      }
      const apiPort = await freePort()
      const api = start("api", apiPort, { ...common, ROLE: "api" })
      const rss = await tap(apiPort)
      await waitReady(api, 60_000)

      // The platform side: 15 webhooks of the feeds bot over three channels of S1.
      const channels = [CHANNEL_INDEX.text, CHANNEL_INDEX.text2, CHANNEL_INDEX.news].map((i) => channelId(1, i))
      const webhooks: Array<{ id: string; token: string; channel: string }> = []
      for (let w = 0; w < WEBHOOKS; w++) {
        const channel = channels[w % channels.length]!
        webhooks.push({ ...(await createWebhook(api.url, channel, `Workers ${w}`)), channel })
      }
      // The sources: 60 sandbox feeds with one item each (the baseline, never posted).
      for (let s = 0; s < SOURCES; s++) await publish(api.url, feedName(s), `r0-s${s}`, `Round 0 source ${s}`, itemUrl(0, s, 0))

      // The feeds, stored as the feeds service stores them, and their sources.
      const cipher = Cipher.make(parseKeyring(KEY))
      const identifiers = Array.from({ length: SOURCES }, (_, s) => `${rss.url}/sandbox/rss/${feedName(s)}.xml`)
      const rows: Array<unknown> = []
      for (let s = 0; s < SOURCES; s++) {
        for (let k = 0; k < FEEDS_PER_SOURCE; k++) {
          const hook = webhooks[(s * FEEDS_PER_SOURCE + k) % WEBHOOKS]!
          const options = { custom_header: `[${tag(s, k)}] %title%`, ...(k === 0 ? {} : { filter_words: [`topic${k}`] }) }
          const tokenEnc = Effect.runSync(cipher.encrypt(Redacted.make(hook.token), `feed-webhook:${hook.id}`))
          rows.push(BOT2_ID, S1_ID, identifiers[s], JSON.stringify(options), hook.id, tokenEnc, hook.channel)
        }
      }
      const values = Array.from({ length: rows.length / 7 }, (_, i) =>
        `($${i * 7 + 1}, $${i * 7 + 2}, 'rss', $${i * 7 + 3}, $${i * 7 + 4}::jsonb, $${i * 7 + 5}, $${i * 7 + 6}, 'Workers', $${i * 7 + 7}, now() - interval '1 minute')`)
      await query(db.sql, `INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options, webhook_id, webhook_token_enc,
        webhook_name, webhook_channel_id, created_at) VALUES ${values.join(", ")}`, rows)
      await query(db.sql, `INSERT INTO feed_sources (module, identifier) SELECT DISTINCT module, feed_identifier FROM feeds ON CONFLICT DO NOTHING`)
      const feedCount = await query<{ n: number }>(db.sql, "SELECT count(*)::int AS n FROM feeds")
      assert.strictEqual(Number(feedCount[0]!.n), SOURCES * FEEDS_PER_SOURCE)

      // Three workers: sandbox mode against the API's sandbox.
      const workers = await Promise.all([1, 2, 3].map(async (n) =>
        start(`worker${n}`, await freePort(), { ...common, ROLE: "worker", PUBLIC_URL: api.url })
      ))
      await Promise.all(workers.map((w) => waitReady(w, 60_000)))

      const baselined = async () =>
        Number((await query<{ n: number }>(db.sql, "SELECT count(*)::int AS n FROM feed_sources WHERE baselined_at IS NOT NULL"))[0]!.n)
      await until("every source's first poll", 40_000, async () => (await baselined()) === SOURCES || `${await baselined()} of ${SOURCES}`)

      /** Where the missing messages stand: their delivery rows, their feeds' status, their sources' polls, the jobs. */
      const diagnose = async (missing: ReadonlyArray<string>) => {
        const rows = await query<{ key: string; state: string; reason: string | null; attempts: number; status: string | null; polled: string | null }>(
          db.sql,
          `SELECT m.key, d.state, d.reason, d.attempts, st.state || coalesce(': ' || st.reason, '') AS status,
             (SELECT to_char(s.last_poll_at, 'HH24:MI:SS.MS') || ' ' || coalesce(s.last_error, '') || ' seen: ' ||
                (SELECT string_agg(si.item_id, ',') FROM feed_seen_items si WHERE si.source_id = s.id) FROM feed_sources s
               WHERE s.module = f.module AND s.identifier = f.feed_identifier) AS polled
           FROM unnest($1::text[]) AS m(key)
           LEFT JOIN feeds f ON f.webhook_options->>'custom_header' LIKE '[' || split_part(m.key, ' ', 1) || ']%'
           LEFT JOIN feed_deliveries d ON d.feed_id = f.id AND d.url = split_part(m.key, ' ', 2)
           LEFT JOIN feed_status st ON st.feed_id = f.id`,
          [missing]
        ).catch((e) => [{ key: `diagnosis failed: ${String(e)}`, state: "", reason: null, attempts: 0, status: null, polled: null }])
        const jobs = await query<{ name: string; state: string; n: number }>(
          db.sql,
          "SELECT name, state, count(*)::int AS n FROM pgboss.job GROUP BY 1, 2 ORDER BY 1, 2"
        ).catch(() => [])
        return `missing ${JSON.stringify(rows.slice(0, 5))}; jobs ${jobs.map((j) => `${j.name}/${j.state}=${j.n}`).join(" ")}`
      }
      const received = async (round: number) => {
        const all = (await inbox(api.url)).map(keyOf)
        return all.filter((k) => k.includes(`/r${round}/`))
      }

      // Round 1, all three workers running.
      const expected1 = await publishRound(api.url, 1, 1)
      await until("round 1 in the inbox", 45_000, async () => {
        const got = new Set(await received(1))
        if (got.size >= expected1.length) return true
        return `${got.size} of ${expected1.length}; ${await diagnose(expected1.filter((k) => !got.has(k)))}`
      })

      // Round 2, three items a source (24 messages a webhook: seconds of posting at 5 per 2 s):
      // one worker is killed while the round is being polled and posted.
      const expected2 = await publishRound(api.url, 2, 3)
      // Killed while it holds a webhook's job: 9 post jobs running means each worker runs one (4 at most each).
      const activePosts = async () =>
        Number((await query<{ n: number }>(db.sql, "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'feed-post' AND state = 'active'"))[0]!.n)
      await until("9 webhooks posting at once", 30_000, async () => (await activePosts()) >= 9 || `${await activePosts()} post jobs running`)
      const victim = workers[0]!
      victim.child.kill("SIGKILL")
      assert.deepStrictEqual(await victim.exited, { code: null, signal: "SIGKILL" })

      /**
       * Round 2's deliveries the dead worker left unknown: its `sending` rows are looked for in their
       * channel by the next job (found → sent, absent → sent once), so none is expected; one that
       * could not be looked for is failed, never re-sent blindly (spec §4).
       */
      const unknown = async () =>
        (await query<{ tag: string; url: string }>(
          db.sql,
          `SELECT f.webhook_options->>'custom_header' AS tag, d.url FROM feed_deliveries d JOIN feeds f ON f.id = d.feed_id
            WHERE d.state = 'failed' AND starts_with(d.reason, $1)`,
          [UNKNOWN]
        )).map((r) => `${/^\[(s\d+k\d+)\]/.exec(r.tag)?.[1]} ${r.url}`)
      await until("round 2 delivered by the two workers left", 60_000, async () => {
        const got = new Set(await received(2))
        const lost = new Set(await unknown())
        const missing = expected2.filter((k) => !got.has(k) && !lost.has(k))
        return missing.length === 0 || `${missing.length} missing, e.g. ${missing.slice(0, 3).join(", ")}`
      })
      // The dead worker's webhook jobs ran again elsewhere (its heartbeat stopped), not after their 10-minute lease.
      // Time for a duplicate to show: two more intervals of polls and posts.
      await sleep(2 * INTERVAL * 1000)

      // Exactly once per matching feed, nothing for the others; the unknown ones at most the dead worker's sends in flight.
      const all = (await inbox(api.url)).filter((m) => /\/r[12]\//.test(m.body.content))
      const counts = new Map<string, number>()
      for (const m of all) counts.set(keyOf(m), (counts.get(keyOf(m)) ?? 0) + 1)
      const twice = [...counts].filter(([, n]) => n > 1)
      assert.deepStrictEqual(twice, [], "posted more than once")
      const lost = await unknown()
      // A worker serves up to 20 webhooks at once (5 a claim × 4, layers/delivery/DeliveryJobs.ts), one send each.
      assert.isAtMost(lost.length, 20, `left unknown by the dead worker: ${lost.join(", ")}`)
      // Unknown ones may have reached the platform (the worker died after the send): in the inbox once, or not at all.
      assert.sameMembers([...new Set([...counts.keys(), ...lost])], [...expected1, ...expected2])
      for (const m of all) assert.deepStrictEqual(m.body.allowed_mentions, { parse: [] })
      // What each feed's status counts is what its webhook received.
      const delivered = await query<{ n: number }>(db.sql, "SELECT COALESCE(sum(delivered), 0)::int AS n FROM feed_status")
      assert.strictEqual(Number(delivered[0]!.n), all.length - lost.filter((k) => counts.has(k)).length)

      // Once per interval: each fetch of a source in a slot of its own, and every source kept being polled.
      // No exception for the dead worker's polls: a poll job pg-boss delivers again (its heartbeat
      // stopped) carries its slot, and does not fetch again when the dead worker had recorded that
      // slot's poll; when it had not, the chain of that source waited for the job (no fetch in between).
      for (const [s, identifier] of identifiers.entries()) {
        const path = new URL(identifier).pathname
        const times = rss.fetches.get(path) ?? []
        const offset = slotOffset("rss", identifier, INTERVAL)
        const slots = times.map((t) => Math.floor((t / 1000 - offset) / INTERVAL))
        const extra = slots.length - new Set(slots).size
        assert.strictEqual(extra, 0, `source ${s} fetched twice in one interval: ${times.map((t) => new Date(t).toISOString()).join(", ")}`)
        assert.isAtLeast(times.length, 3, `source ${s}: baseline, round 1 and round 2`)
      }
      // The dead worker's polls in hand ran again elsewhere (each of their jobs retried once at most);
      // a worker claims up to 2 batches of 10 polls (layers/delivery/DeliveryJobs.ts).
      const retriedPolls = await query<{ retries: number }>(
        db.sql,
        "SELECT retry_count AS retries FROM pgboss.job WHERE name = 'feed-poll' AND retry_count > 0"
      )
      assert.isAtMost(retriedPolls.length, 20, "at most the dead worker's polls in hand ran again")

      // The survivors are still serving and stop cleanly; the API too.
      for (const p of [api, ...workers.slice(1)]) {
        p.child.kill("SIGTERM")
        const exit = await Promise.race([p.exited, sleep(20_000).then(() => "timeout" as const)])
        assert.deepStrictEqual(exit, { code: 0, signal: null }, `${p.name}:\n${p.output()}`)
      }
    },
    240_000
  )
})
