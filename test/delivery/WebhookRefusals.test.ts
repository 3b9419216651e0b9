/**
 * A webhook the chat platform refuses for good (delivery.md §4): 401 (its token no longer valid),
 * 403 (it may not post in its channel), 404 (deleted). Each: never retried; the feed is `disabled`
 * with a reason a user can act on (not a restatement of the state), one audit entry as the bot,
 * its waiting messages failed with the reason, and nothing is sent to the platform afterwards.
 * The live Discord client against the sandbox: the 401 is the sandbox's own answer to a wrong token,
 * the 403 an injected fault, the 404 a deleted webhook.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { DeliveryEngine } from "../../src/services/delivery/DeliveryEngine.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import type { TestWebhook } from "./DeliveryFixtures.ts"
import { auditOf, deleteWebhook, deliveriesOf, dropSchemaAtEnd, inbox, insertFeed, newWebhook, processLayer, scriptedPoller, world } from "./DeliveryFixtures.ts"
import { rss } from "./ItemFixtures.ts"

const EXECUTE = "POST /webhooks/{id}/{token}"

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)
const item = (id: string, age: number) =>
  rss({ id, title: `Item ${id}`, url: `https://refusals.test/${id}`, publishedAt: minutesAgo(age), eventAt: minutesAgo(age), feedUrl: "https://refusals.test/feed.xml" })

let sources = 0
const newSource = () => `https://refusals.test/src-${sources++}-${randomBytes(3).toString("hex")}.xml`

const sandboxFetch = (path: string, init?: RequestInit) =>
  Effect.flatMap(SandboxServer, (sandbox) => Effect.promise(() => fetch(`${sandbox.url}${path}`, init)))

/** How many times the platform was asked to execute a webhook (any webhook). */
const executeCalls = Effect.flatMap(sandboxFetch("/sandbox/stats"), (r) =>
  Effect.promise(async () => ((await r.json()) as { calls: Record<string, number> }).calls[EXECUTE] ?? 0))

interface Case {
  readonly status: 401 | 403 | 404
  readonly how: string
  /** The webhook the feed stores, made to be refused. */
  readonly refused: (webhook: TestWebhook) => Effect.Effect<TestWebhook, never, SandboxServer>
  readonly reason: RegExp
}

const cases: ReadonlyArray<Case> = [
  {
    status: 401,
    how: "its token is no longer valid (regenerated on the platform)",
    refused: (webhook) => Effect.succeed({ id: webhook.id, token: `${webhook.token}x` }),
    reason: /^The chat platform refused the webhook's token \(401 Invalid Webhook Token, code 50027\)\. Delete this feed and create it again with a working webhook\.$/
  },
  {
    status: 403,
    how: "it lost access to its channel (Missing Access)",
    refused: (webhook) =>
      Effect.as(
        sandboxFetch("/sandbox/faults", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ route: EXECUTE, kind: "403", count: 1, path: `/sandbox/discord/api/v10/webhooks/${webhook.id}` })
        }).pipe(Effect.tap((r) => Effect.sync(() => assert.strictEqual(r.status, 200, "the sandbox takes a 403 fault")))),
        webhook
      ),
    reason: /^The chat webhook may not post in its channel \(403 Missing Access, code 50001\)\. Give it back its access, then edit the feed to re-enable it\.$/
  },
  {
    status: 404,
    how: "it was deleted from its channel",
    refused: (webhook) => Effect.as(deleteWebhook(webhook), webhook),
    reason: /^The chat webhook no longer exists \(404 Unknown Webhook, code 10015\): it was deleted from its channel\. Delete this feed and create it again with a working webhook\.$/
  }
]

for (const kind of dbKinds) {
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  const { layer: poller, script } = scriptedPoller()
  const base = dropSchemaAtEnd(pgboss).pipe(Layer.provideMerge(world(kind)))
  const engine = processLayer({ pgbossSchema: pgboss, poller })

  // Each disable is logged (a warning): kept, and checked below.
  const app = Layer.provideMerge(engine, base).pipe(Layer.provideMerge(CapturedLogs.layer))
  layer(app, { excludeTestServices: true, timeout: "120 seconds" })(`webhook refusals on ${kind}`, (it) => {
    for (const c of cases) {
      it.effect(`${c.status}: ${c.how} → disabled with the reason, audited once, never retried, nothing sent afterwards`, () =>
        Effect.gen(function*() {
          const delivery = yield* DeliveryEngine
          const store = yield* DeliveryStore
          const webhook = yield* c.refused(yield* newWebhook)
          const identifier = newSource()
          const feedId = yield* insertFeed({ identifier, webhook })
          const sourceId = yield* DeliveryScheduling.use((s) => s.attach("rss", identifier))
          script.serve(identifier, [])
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Baseline")
          script.serve(identifier, [item(`${c.status}-1`, 3), item(`${c.status}-2`, 2)])
          assert.deepInclude(yield* delivery.pollSource(sourceId), { _tag: "Delivered", queued: 2 })

          const calls = yield* executeCalls
          // Never retried: one request, then the job ends well (no PostRetry), the second message failed unsent.
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 1, interrupted: 0, more: false })
          assert.strictEqual((yield* executeCalls) - calls, 1, "one request to the platform")

          const status = Option.getOrThrow(yield* store.status(feedId))
          assert.strictEqual(status.state, "disabled")
          assert.match(status.reason ?? "", c.reason)
          // The reason says why and what to do, not merely the state again.
          assert.notMatch(status.reason ?? "", /^(the )?(feed )?(is )?disabled/i)

          const rows = yield* deliveriesOf(feedId)
          assert.deepStrictEqual(rows.map((d) => [d.item_id, d.state, d.message_id]), [[`${c.status}-1`, "failed", null], [`${c.status}-2`, "failed", null]])
          assert.strictEqual(rows[0]!.reason, status.reason)
          assert.strictEqual(rows[1]!.reason, `not posted: the feed was disabled (${status.reason})`)

          const audit = yield* auditOf(feedId)
          assert.deepStrictEqual(audit.map((a) => [a.user_id, a.user_name, a.event_type, a.module_name]), [["200000000000000002", "FeedsBot", "PATCH", "rss"]])
          assert.strictEqual(audit[0]!.event_string, `Disabled rss feed ${feedId} ("${identifier}"): ${status.reason}`)
          // The operator's log says it once, with the same reason, and never shows the webhook's token.
          const disabled = (yield* logged("feed disabled")).filter((l) => l.annotations["feed"] === String(feedId))
          assert.deepStrictEqual(disabled.map((l) => l.annotations["reason"]), [status.reason])
          assert.notInclude(JSON.stringify(yield* CapturedLogs.use((c) => c.lines)), webhook.token)

          // Afterwards: new items are neither polled for it nor sent; no second audit entry.
          script.serve(identifier, [item(`${c.status}-1`, 3), item(`${c.status}-2`, 2), item(`${c.status}-3`, 1)])
          assert.strictEqual((yield* delivery.pollSource(sourceId))._tag, "Idle")
          assert.deepStrictEqual(yield* delivery.postWebhook(webhook.id), { sent: 0, failed: 0, interrupted: 0, more: false })
          assert.strictEqual((yield* executeCalls) - calls, 1, "nothing more sent to the platform")
          assert.strictEqual((yield* auditOf(feedId)).length, 1)
          assert.strictEqual((yield* deliveriesOf(feedId)).length, 2)
          assert.deepStrictEqual(yield* inbox(webhook.id), [])
        }))
    }
  })
}

