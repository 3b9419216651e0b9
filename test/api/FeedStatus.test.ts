/**
 * `GET {modules}/<m>/feeds/:feedId/status` (delivery.md §5) over HTTP, on every module: a feed no
 * poll has reached (an API process without workers: its first poll is planned, never run), the
 * access rules of the other feed routes (404, 403, 400 on a bad id), the OpenAPI document, and a
 * feed after delivery (a gateway with its worker, polling every second): its source polled, a
 * published item posted and counted; a webhook that refuses → disabled with the reason; a PATCH
 * checks the webhook again and re-enables the feed.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FeedStatus } from "../../src/domain/feeds/FeedStatus.ts"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT2_ID, S1_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { expectJson, FEED_MODULES, feedIdentifier, OpenApiDoc, S1_TEXT } from "./ContractFixtures.ts"

const modulePath = (m: string, bot = BOT2_ID, server = S1_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/${m}`

const call = (method: string, path: string, body?: unknown, userId: string = ALICE_ID) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(userId)
    return yield* raw({
      method,
      token,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
    }, path)
  })

const createFeed = (m: (typeof FEED_MODULES)[number], options: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const res = yield* call("POST", `${modulePath(m)}/feeds`, {
      feed_identifier: feedIdentifier(m, app.url),
      webhook_channel: S1_TEXT,
      webhook_options: options
    })
    const body = yield* json(res)
    assert.strictEqual(res.status, 200, JSON.stringify(body))
    return body as { readonly id: string }
  })

const status = (m: string, id: string) =>
  Effect.flatMap(call("GET", `${modulePath(m)}/feeds/${id}/status`), (res) => expectJson(res, 200, FeedStatus))

const errorOf = (res: Response) => Effect.map(json(res), (b) => ({ status: res.status, code: b.errors?.[0]?.code as string | undefined }))

for (const db of dbKinds) {
  // ROLE=api: the API sends a new feed's first poll and nothing runs it.
  layer(TestApp.layer({ capabilities: { db }, config: { role: "api" } }), { excludeTestServices: true, timeout: 60_000 })(
    `feed status, never polled (${db})`,
    (it) => {
      for (const m of FEED_MODULES) {
        it.effect(`${m}: active, nulls and zeros, its first poll planned; 404 once deleted`, () =>
          Effect.gen(function*() {
            const t0 = Date.now()
            const feed = yield* createFeed(m)
            const s = yield* status(m, feed.id)
            assert.deepInclude(s, {
              state: "active",
              reason: null,
              last_poll_at: null,
              last_delivery_at: null,
              delivered: 0,
              skipped: 0,
              not_crossposted: 0
            })
            // The first poll is sent at once: planned for now (whole seconds), not at the end of an interval.
            assert.isNotNull(s.next_poll_at)
            const next = Date.parse(s.next_poll_at!)
            assert.isAtLeast(next, t0 - 1_000)
            assert.isAtMost(next, Date.now() + 1_000)
            assert.strictEqual(new Date(next).toISOString(), s.next_poll_at)

            assert.strictEqual((yield* call("DELETE", `${modulePath(m)}/feeds/${feed.id}`)).status, 200)
            const gone = yield* call("GET", `${modulePath(m)}/feeds/${feed.id}/status`)
            assert.deepStrictEqual(yield* errorOf(gone), { status: 404, code: "Not Found" })
          }))
      }

      it.effect("404 like the other feed routes: unknown feed, another module's feed, another bot, unknown server", () =>
        Effect.gen(function*() {
          const feed = yield* createFeed("rss")
          for (
            const path of [
              `${modulePath("rss")}/feeds/999999999/status`,
              `${modulePath("forum")}/feeds/${feed.id}/status`,
              `${modulePath("rss", BOT1_ID)}/feeds/${feed.id}/status`,
              `/api/v1/bots/${BOT2_ID}/servers/999999999999999999/modules/rss/feeds/${feed.id}/status`
            ]
          ) {
            assert.deepStrictEqual(yield* errorOf(yield* call("GET", path)), { status: 404, code: "Not Found" }, path)
          }
        }))

      it.effect("403 like the other feed routes: a plain member, a module not available to the user", () =>
        Effect.gen(function*() {
          for (const m of FEED_MODULES) {
            const member = yield* call("GET", `${modulePath(m, BOT1_ID)}/feeds/1/status`, undefined, BOB_ID)
            assert.deepStrictEqual(yield* errorOf(member), { status: 403, code: "Forbidden" }, `${m} member`)
            const unavailable = yield* call("GET", `${modulePath(m, BOT1_ID, S2_ID)}/feeds/1/status`)
            assert.deepStrictEqual(yield* errorOf(unavailable), { status: 403, code: "Forbidden" }, `${m} unavailable`)
          }
        }))

      it.effect("400 on an id that is not a feed id, as PATCH and DELETE answer; 401 without a token", () =>
        Effect.gen(function*() {
          for (const id of ["abc", "0", "-1"]) {
            const res = yield* call("GET", `${modulePath("rss")}/feeds/${id}/status`)
            const patch = yield* call("PATCH", `${modulePath("rss")}/feeds/${id}`, { webhook_options: {} })
            assert.strictEqual(res.status, patch.status, id)
            assert.strictEqual(res.status, 400, id)
          }
          const anonymous = yield* raw({}, `${modulePath("rss")}/feeds/1/status`)
          assert.strictEqual(anonymous.status, 401)
        }))

      it.effect("the OpenAPI document has the six status routes, answering FeedStatus", () =>
        Effect.gen(function*() {
          const doc = yield* expectJson(yield* raw({}, "/openapi.json"), 200, OpenApiDoc, { strict: false })
          for (const m of FEED_MODULES) {
            const route = doc.paths[`/api/v1/bots/{appClientId}/servers/{serverId}/modules/${m}/feeds/{feedId}/status`]
            assert.isDefined(route, m)
            const get = route!.get as { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
            const schema = JSON.stringify(get.responses["200"]!.content!["application/json"]!.schema)
            assert.include(schema, "FeedStatus", m)
            for (const code of ["400", "401", "403", "404"]) assert.property(get.responses, code, `${m} ${code}`)
          }
        }))
    }
  )
}

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })(
  "feed status without a delivery engine (memory)",
  (it) => {
    it.effect("active, never polled, nothing planned", () =>
      Effect.gen(function*() {
        const feed = yield* createFeed("rss")
        assert.deepStrictEqual(yield* status("rss", feed.id), {
          state: "active",
          reason: null,
          last_poll_at: null,
          next_poll_at: null,
          last_delivery_at: null,
          delivered: 0,
          skipped: 0,
          not_crossposted: 0
        })
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// With the worker: the engine end to end
// ---------------------------------------------------------------------------------------------

/** Polls `f` every 250 ms until `done` holds, or fails after `ms` with the last value. */
const eventually = <A, E, R>(f: Effect.Effect<A, E, R>, done: (a: A) => boolean, ms = 20_000, label = "condition") =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    let last = yield* f
    while (!done(last)) {
      if (Date.now() > deadline) assert.fail(`${label} not reached after ${ms} ms: ${JSON.stringify(last)}`)
      yield* Effect.sleep("250 millis")
      last = yield* f
    }
    return last
  })

const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", "user-agent": "feed-status-test" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

for (const db of dbKinds) {
  layer(
    // The disable this test provokes is logged (a warning): kept, and checked.
    TestApp.layer({ capabilities: { db }, config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } } }).pipe(
      Layer.provideMerge(CapturedLogs.layer)
    ),
    { excludeTestServices: true, timeout: 90_000 }
  )(`feed status after delivery (${db})`, (it) => {
    it.effect("polled, then a published item posted and counted; a refusing webhook disables it; PATCH re-enables it", () =>
      Effect.gen(function*() {
        // A short name of its own: no other test's items on this source.
        const app = yield* TestApp
        const name = `status-${db}`
        const created = yield* sandbox("POST", `/sandbox/sources/rss/${name}/events`, { type: "post", title: "Before the feed" })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const res = yield* call("POST", `${modulePath("rss")}/feeds`, {
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_channel: S1_TEXT,
          webhook_options: {}
        })
        const feed = (yield* json(res)) as { id: string }
        assert.strictEqual(res.status, 200, JSON.stringify(feed))

        // The baseline poll: nothing posted.
        const baseline = yield* eventually(status("rss", feed.id), (s) => s.last_poll_at !== null, 20_000, "the first poll")
        assert.deepInclude(baseline, { state: "active", delivered: 0, last_delivery_at: null })
        // Feed dates have whole seconds: an item of the creation's second would count as older than the feed.
        yield* Effect.sleep("1 second")

        const published = yield* sandbox("POST", `/sandbox/sources/rss/${name}/events`, { type: "post", title: "Fresh news" })
        assert.strictEqual(published.status, 201, JSON.stringify(published.body))
        const delivered = yield* eventually(status("rss", feed.id), (s) => s.delivered === 1, 20_000, "the delivery")
        assert.strictEqual(delivered.state, "active")
        assert.isNotNull(delivered.last_delivery_at)
        assert.isAtLeast(Date.parse(delivered.next_poll_at!), Date.parse(delivered.last_poll_at!))

        // The webhook refuses (401) the next message: the feed is disabled with a reason, not retried.
        const fault = yield* sandbox("POST", "/sandbox/faults", { route: "POST /webhooks/{id}/{token}", kind: "401", count: 1 })
        assert.strictEqual(fault.status, 200, JSON.stringify(fault.body))
        yield* sandbox("POST", `/sandbox/sources/rss/${name}/events`, { type: "post", title: "Refused news" })
        const disabled = yield* eventually(status("rss", feed.id), (s) => s.state === "disabled", 20_000, "the disable")
        assert.isString(disabled.reason)
        assert.isAbove(disabled.reason!.length, 10)
        assert.isNull(disabled.next_poll_at)
        assert.strictEqual(disabled.delivered, 1)
        // The operator's log says it once, with the reason the user sees.
        const lines = (yield* logged("feed disabled")).filter((l) => l.annotations["feed"] === feed.id)
        assert.deepStrictEqual(lines.map((l) => l.annotations["reason"]), [disabled.reason])

        // A PATCH checks the webhook again: still refusing → 400 at webhook_url, the feed stays disabled.
        yield* sandbox("POST", "/sandbox/faults", { route: "GET /webhooks/{id}/{token}", kind: "401", count: 1 })
        const refused = yield* call("PATCH", `${modulePath("rss")}/feeds/${feed.id}`, { webhook_options: {} })
        const refusedBody = yield* json(refused)
        assert.strictEqual(refused.status, 400, JSON.stringify(refusedBody))
        assert.strictEqual(refusedBody.errors[0].additionalProperties.path, "webhook_url")
        assert.strictEqual((yield* status("rss", feed.id)).state, "disabled")

        // The webhook answers again: a PATCH checks it and re-enables the feed.
        const patched = yield* call("PATCH", `${modulePath("rss")}/feeds/${feed.id}`, { webhook_options: {} })
        assert.strictEqual(patched.status, 200, JSON.stringify(yield* json(patched)))
        const again = yield* status("rss", feed.id)
        assert.deepInclude(again, { state: "active", reason: null })
        assert.isNotNull(again.next_poll_at)
        // And it delivers again.
        yield* sandbox("POST", `/sandbox/sources/rss/${name}/events`, { type: "post", title: "News again" })
        yield* eventually(status("rss", feed.id), (s) => s.delivered === 2, 20_000, "the delivery after re-enabling")
      }))
  })
}
