/**
 * The delivery engine under test, as a process would run it: a database (PGlite, or a schema of
 * TEST_DATABASE_URL that further pools can join, as other processes would), the live Discord client
 * against a sandbox of its own (webhook buckets, 429s, faults, the message inbox), a SourcePoller
 * whose answers the test scripts, and the engine layers built per "process" so a test can restart
 * them on the same database or run two side by side.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { DeliveryEngineLive, DeliveryWorker } from "../../src/layers/delivery/DeliveryJobs.ts"
import type { DeliveryWorkerOptions } from "../../src/layers/delivery/DeliveryJobs.ts"
import { JobEnginePgBoss } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { BOT2_ID, BOT2_TOKEN, CHANNEL_INDEX, channelId } from "../../src/sandbox/Seed.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import type { DeliverySettingsShape } from "../../src/services/delivery/DeliverySettings.ts"
import { DeliverySettings } from "../../src/services/delivery/DeliverySettings.ts"
import type { PollResult, PollState } from "../../src/services/sources/SourcePoller.ts"
import { PollFailed, SourcePoller } from "../../src/services/sources/SourcePoller.ts"
import { embeddedFrom } from "../utils/Db.ts"
import type { DbKind } from "../utils/Db.ts"

// ---------------------------------------------------------------------------------------------
// The scripted source: what each identifier serves, set by the test; polls counted.

export interface Script {
  readonly serve: (identifier: string, answer: ReadonlyArray<Item> | PollFailed) => void
  readonly polls: (identifier: string) => number
  /** Polls answered through `layerAs(name)`. */
  readonly pollsBy: (name: string) => number
}

const hashOf = (items: ReadonlyArray<Item>) => createHash("sha256").update(items.map((i) => i.id).join("\n")).digest("hex")

/** A SourcePoller over `answers`: the same items as last time → NotModified (a body hash, as the live one). */
export const scriptedPoller = () => {
  const answers = new Map<string, ReadonlyArray<Item> | PollFailed>()
  const counts = new Map<string, number>()
  const byName = new Map<string, number>()
  const poll = (identifier: string, previous: PollState, name: string): Effect.Effect<PollResult, PollFailed> =>
    Effect.suspend(() => {
      counts.set(identifier, (counts.get(identifier) ?? 0) + 1)
      byName.set(name, (byName.get(name) ?? 0) + 1)
      const answer = answers.get(identifier) ?? []
      if (answer instanceof PollFailed) return Effect.fail(answer)
      const bodyHash = hashOf(answer)
      const state: PollState = { etag: null, lastModified: null, bodyHash, cursor: null }
      return Effect.succeed(
        previous.bodyHash === bodyHash ? { _tag: "NotModified", state } as const : { _tag: "Items", items: answer, state } as const
      )
    })
  const layerAs = (name: string) =>
    Layer.succeed(SourcePoller, SourcePoller.of({
      poll: (_module, identifier, previous) => poll(identifier, previous, name),
      pollMany: (_module, sources) =>
        Effect.map(
          Effect.forEach(sources, (s) => Effect.map(Effect.result(poll(s.identifier, s.previous, name)), (r) => [s.identifier, r] as const)),
          (rs) => new Map(rs.map(([id, r]) => [id, r._tag === "Success" ? r.success : r.failure]))
        )
    }))
  const script: Script = {
    serve: (identifier, answer) => void answers.set(identifier, answer),
    polls: (identifier) => counts.get(identifier) ?? 0,
    pollsBy: (name) => byName.get(name) ?? 0
  }
  return { layer: layerAs("default"), layerAs, script }
}

// ---------------------------------------------------------------------------------------------
// The database: PGlite (one connection, shared by every "process") or a schema of PostgreSQL.

/** Where the suite's data lives, and how another process connects to it. */
export class TestDatabase extends Context.Service<TestDatabase, {
  readonly kind: DbKind
  /** A pool of its own on the same database (PostgreSQL); on PGlite the one connection there is. */
  readonly anotherPool: Layer.Layer<SqlClient.SqlClient>
}>()("test/TestDatabase") {}

const postgres = Layer.unwrap(Effect.gen(function*() {
  const schema = `t_${randomBytes(6).toString("hex")}`
  const url = Redacted.make(process.env.TEST_DATABASE_URL!)
  const admin = yield* PgClient.make({ url, maxConnections: 1 })
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).pipe(Effect.ignore))
  const pool = () =>
    PgClient.layer({ url, maxConnections: 6, startupOptions: `-c search_path=${schema}` }).pipe(
      Layer.provide(Reactivity.layer),
      Layer.orDie
    )
  return Layer.effect(TestDatabase, Effect.succeed(TestDatabase.of({ kind: "postgres", anotherPool: Layer.fresh(pool()) })))
    .pipe(Layer.provideMerge(pool()))
})).pipe(Layer.provide(Reactivity.layer))

const pglite = Layer.unwrap(Effect.gen(function*() {
  // Migrated already (test/utils/PgliteTemplate.ts); the harness's migrations find nothing to do.
  const url = yield* embeddedFrom("migrated")
  return Layer.effect(TestDatabase, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return TestDatabase.of({ kind: "pglite", anotherPool: Layer.succeed(SqlClient.SqlClient, sql) })
  })).pipe(Layer.provideMerge(PgClient.layer({ url, maxConnections: 1 })))
}))

/** The suite's world: a migrated database, the Cipher, a sandbox on a loopback port, an HTTP client. */
export const world = (kind: DbKind) =>
  Layer.mergeAll(
    MigrationsLayer.pipe(Layer.provideMerge(kind === "postgres" ? postgres : pglite)),
    Cipher.layer(parseKeyring(generateKey())),
    SandboxServer.layer(),
    FetchHttpClient.layer
  )

// ---------------------------------------------------------------------------------------------
// A "process": the engine layers over the world, with or without a worker.

export interface ProcessOptions {
  readonly pgbossSchema: string
  readonly poller: Layer.Layer<SourcePoller>
  readonly settings?: Partial<DeliverySettingsShape>
  /** Run the jobs (a worker) or only the services (the test drives them). */
  readonly worker?: DeliveryWorkerOptions | false
  /** The job engine the services see, wrapped (a test steps into a send). */
  readonly wrapEngine?: (engine: JobEngine["Service"]) => JobEngine["Service"]
}

/** The Discord client against the suite's sandbox: short time-outs so a hang costs a second. */
export const platformLayer = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  return ChatPlatformDiscord.layer({ ...SandboxMode.platform(sandbox.url), timeout: "1 second", waitBudget: "10 seconds" })
}))

export const processLayer = (o: ProcessOptions) => {
  const wrapped = <E>(engine: Layer.Layer<JobEngine, E, SqlClient.SqlClient>): Layer.Layer<JobEngine, E, SqlClient.SqlClient> =>
    o.wrapEngine === undefined ? engine : Layer.effect(JobEngine, Effect.map(JobEngine, o.wrapEngine)).pipe(Layer.provide(engine))
  const services = DeliveryEngineLive.pipe(
    Layer.provideMerge(wrapped(JobEnginePgBoss({ schema: o.pgbossSchema, pollingInterval: "0.5 seconds", drainTimeout: "10 seconds" }))),
    Layer.provideMerge(Layer.mergeAll(
      AuditLogSql,
      DeliverySettings.layer({ pollIntervalSeconds: 1, ...o.settings }),
      o.poller,
      platformLayer
    ))
  )
  const built = o.worker === false || o.worker === undefined
    ? services
    : DeliveryWorker({ pollingInterval: "0.5 seconds", ...o.worker }).pipe(Layer.provideMerge(services))
  return Layer.fresh(built)
}

/** A clock stopped at `at` (epoch ms); sleeping is real. */
export const stoppedAt = (at: number): Clock.Clock => {
  const real = Clock.Clock.defaultValue()
  return {
    ...real,
    currentTimeMillisUnsafe: () => at,
    currentTimeMillis: Effect.succeed(at),
    currentTimeNanosUnsafe: () => BigInt(at) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(at) * 1_000_000n)
  }
}

/** Runs `self` with the clock stopped at `at`. */
export const pinnedAt = (at: number) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provideService(self, Clock.Clock, stoppedAt(at))

/** Drops the suite's pg-boss schema at the end (PGlite's memory goes with the process anyway). */
export const dropSchemaAtEnd = (schema: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
  }))

// ---------------------------------------------------------------------------------------------
// Feeds, webhooks, the sandbox's inbox and faults.

export interface TestWebhook {
  readonly id: string
  readonly token: string
  /** The channel it posts to (the feed's `webhook_channel_id`); S1's text channel when not said. */
  readonly channelId?: string
}

let webhookCount = 0
const CHANNELS = [CHANNEL_INDEX.text, CHANNEL_INDEX.text2, CHANNEL_INDEX.news] as const

/** A webhook of its own for a test, created on the sandbox by the feeds bot. */
export const newWebhook = Effect.gen(function*() {
  const platform = yield* ChatPlatform
  const n = webhookCount++
  const created = yield* platform.createWebhook(Redacted.make(BOT2_TOKEN), channelId(1, CHANNELS[n % CHANNELS.length]!), `Feed hook ${n}`)
  return { id: created.id, token: Redacted.value(created.token!), channelId: created.channel_id } satisfies TestWebhook
})

/** A stored feed of the feeds bot on server S1, on `webhook`; created an hour ago unless said. */
export const insertFeed = (o: {
  readonly module?: Item["module"]
  readonly identifier: string
  readonly webhook: TestWebhook
  readonly options?: DeliveryOptions
  readonly createdAt?: Date
  /** The tags of the forum the webhook posts in (absent: not a forum). */
  readonly forumTags?: ReadonlyArray<{ readonly id: string; readonly name: string }>
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* Cipher
    // The bot's real token, encrypted as the bots registry stores it: the worker reads a webhook's channel with it.
    const botTokenEnc = yield* cipher.encrypt(Redacted.make(BOT2_TOKEN), `bot:${BOT2_ID}:token`)
    yield* sql`INSERT INTO bots (id, name, icon, token_enc) VALUES (${BOT2_ID}, 'FeedsBot', NULL, ${botTokenEnc})
      ON CONFLICT (id) DO NOTHING`
    const tokenEnc = yield* cipher.encrypt(Redacted.make(o.webhook.token), `feed-webhook:${o.webhook.id}`)
    const createdAt = o.createdAt ?? new Date(Date.now() - 3_600_000)
    const rows = yield* sql<{ id: bigint | string | number }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier,
        webhook_options, webhook_id, webhook_token_enc, webhook_name, webhook_channel_id, created_at, forum_tags)
      VALUES (${BOT2_ID}, ${"300000000000000001"}, ${o.module ?? "rss"}, ${o.identifier}, ${JSON.stringify(o.options ?? {})}::jsonb,
        ${o.webhook.id}, ${tokenEnc}, 'Feed hook', ${o.webhook.channelId ?? channelId(1, CHANNEL_INDEX.text)}, ${createdAt},
        ${o.forumTags === undefined ? null : JSON.stringify(o.forumTags)}::jsonb)
      RETURNING id`
    return String(rows[0]!.id)
  })

export interface InboxMessage {
  readonly id: string
  readonly webhookId: string
  readonly body: Record<string, unknown>
}

const Inbox = Schema.Union([
  Schema.Array(Schema.Unknown),
  Schema.Struct({ messages: Schema.Array(Schema.Unknown) })
])

const field = (m: Record<string, unknown>, ...names: Array<string>) => {
  for (const n of names) if (typeof m[n] === "string") return m[n] as string
  return ""
}

/** The sandbox's message inbox for one webhook, oldest first. */
export const inbox = (webhookId: string) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxServer
    const raw = yield* Effect.promise(() =>
      fetch(`${sandbox.url}/sandbox/discord/messages?webhook_id=${webhookId}`).then((r) => r.json() as Promise<unknown>)
    )
    const decoded = Schema.decodeUnknownSync(Inbox)(raw)
    const list = (Array.isArray(decoded) ? decoded : (decoded as { messages: ReadonlyArray<unknown> }).messages) as ReadonlyArray<
      Record<string, unknown>
    >
    return list
      .map((m): InboxMessage => ({
        id: field(m, "id"),
        webhookId: field(m, "webhook_id", "webhookId"),
        body: m["body"] as Record<string, unknown>
      }))
      .filter((m) => m.webhookId === webhookId)
  })

/** A fault the sandbox answers on this webhook's execute route, `count` times. */
export const fault = (
  webhook: TestWebhook,
  kind: "429" | "500" | "hang" | "401" | "cut" | "cut-after",
  count = 1,
  retryAfter?: number
) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    Effect.promise(() =>
      fetch(`${sandbox.url}/sandbox/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          route: "POST /webhooks/{id}/{token}",
          kind,
          count,
          path: `/sandbox/discord/api/v10/webhooks/${webhook.id}`,
          ...(retryAfter === undefined ? {} : { retry_after: retryAfter })
        })
      }).then((r) => {
        if (!r.ok) throw new Error(`fault refused: ${r.status}`)
      })
    ))

/** Deletes the webhook on the platform (as a server admin would). */
export const deleteWebhook = (webhook: TestWebhook) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    Effect.promise(() =>
      fetch(`${sandbox.discordApiUrl}/webhooks/${webhook.id}/${webhook.token}`, { method: "DELETE" }).then((r) => {
        if (!r.ok) throw new Error(`delete refused: ${r.status}`)
      })
    ))

/** Polls `check` every 100 ms until it holds; fails after `within`. */
export const waitUntil = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, within: Duration.Input = "60 seconds") =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(within)
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("100 millis")
    }
  })

/** The rows of a feed's delivery log, oldest event first. */
export const deliveriesOf = (feedId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ item_id: string; state: string; reason: string | null; message_id: string | null; attempts: number }>`
      SELECT item_id, state, reason, message_id, attempts FROM feed_deliveries WHERE feed_id = ${feedId} ORDER BY event_at, id`)

export const auditOf = (feedId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ user_id: string; user_name: string; event_type: string; event_string: string; module_name: string }>`
      SELECT user_id, user_name, event_type, event_string, module_name FROM audit_entries
      WHERE item_identifier = ${feedId} ORDER BY id`)

export const optionalFirst = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])
