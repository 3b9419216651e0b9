/**
 * GET …/logs over HTTP against the sandbox and a real database: the VIEW_AUDIT_LOG rule, filters,
 * pagination, 400s naming the parameter, and the isolation of each server's entries.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT2_ID, CAROL_ID, channelId, S1_ID, S2_ID, S3_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const call = (userId: string, method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method, token: yield* tokenOf(userId) }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    return { status: res.status, body: yield* json(res) }
  })

const logsPath = (server: string, query = "", bot = BOT1_ID) =>
  `/api/v1/bots/${bot}/servers/${server}/logs${query === "" ? "" : `?${query}`}`
const formsPath = (server: string) => `/api/v1/bots/${BOT1_ID}/servers/${server}/modules/forms`

interface Entry {
  readonly id: string
  readonly timestamp: string
  readonly module_name: string
  readonly item_identifier: number | null
  readonly event_type: string
  readonly user_id: string
}

const createForms = (userId: string, server: string, n: number, prefix: string) =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
    Effect.gen(function*() {
      const r = yield* call(userId, "POST", formsPath(server), { title: `${prefix} ${i}` })
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
      return r.body.workflow_id as number
    }))

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 60_000 })(`audit logs over HTTP (${db})`, (it) => {
    /** What the first test writes, for the others. */
    const state = { s1Batch1: [] as Array<number>, s1Batch2: [] as Array<number>, s2: [] as Array<number>, s3: [] as Array<number>, boundary: 0, rssFeed: "" }

    it.effect("setup: entries in S1 (two batches, forms and rss), S2 and S3", () =>
      Effect.gen(function*() {
        state.s1Batch1 = yield* createForms(ALICE_ID, S1_ID, 7, "S1 first")
        yield* Effect.sleep("50 millis")
        state.boundary = Date.now()
        yield* Effect.sleep("50 millis")
        state.s1Batch2 = yield* createForms(ALICE_ID, S1_ID, 5, "S1 second")
        state.s2 = yield* createForms(CAROL_ID, S2_ID, 3, "S2")
        state.s3 = yield* createForms(BOB_ID, S3_ID, 2, "S3")
        // Two more S1 entries in another module through bot 2 (PUSH, DELETE).
        const app = yield* TestApp
        const feed = yield* call(ALICE_ID, "POST", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds`, {
          feed_identifier: `${app.url}${RSS_PATHS.rss}`,
          webhook_channel: channelId(1, 2)
        })
        assert.strictEqual(feed.status, 200, JSON.stringify(feed.body))
        state.rssFeed = feed.body.id
        assert.strictEqual((yield* call(ALICE_ID, "DELETE", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds/${feed.body.id}`)).status, 200)
      }))

    it.effect("user_name is the acting account's username (as GET /user shows it), not its display name, for forms and feeds", () =>
      Effect.gen(function*() {
        const usernames: Record<string, string> = {}
        for (const id of [ALICE_ID, BOB_ID, CAROL_ID]) {
          const me = yield* call(id, "GET", "/api/v1/user")
          assert.strictEqual(me.status, 200, JSON.stringify(me.body))
          usernames[id] = me.body.username
        }
        assert.deepStrictEqual(usernames, { [ALICE_ID]: "alice", [BOB_ID]: "bob", [CAROL_ID]: "carol" })
        const pages = [
          [ALICE_ID, logsPath(S1_ID, "page_size=100")],
          [ALICE_ID, logsPath(S1_ID, "module=rss&page_size=100", BOT2_ID)],
          [CAROL_ID, logsPath(S2_ID, "page_size=100")],
          [BOB_ID, logsPath(S3_ID, "page_size=100")]
        ] as const
        const modules = new Set<string>()
        for (const [viewer, path] of pages) {
          const r = yield* call(viewer, "GET", path)
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          assert.isAbove(r.body.logs.length, 0, path)
          for (const l of r.body.logs as ReadonlyArray<Entry & { user_name: string }>) {
            assert.strictEqual(l.user_name, usernames[l.user_id], JSON.stringify(l))
            modules.add(l.module_name)
          }
        }
        assert.sameMembers([...modules], ["forms", "rss"])
      }))

    describe("VIEW_AUDIT_LOG", () => {
      it.effect("MANAGE_GUILD without VIEW_AUDIT_LOG (ALICE in S2) → 403; plain member (BOB in S1) → 403", () =>
        Effect.gen(function*() {
          const alice = yield* call(ALICE_ID, "GET", logsPath(S2_ID))
          assert.strictEqual(alice.status, 403, JSON.stringify(alice.body))
          assert.strictEqual(alice.body.errors[0].code, "Forbidden")
          assert.include(alice.body.errors[0].message, "VIEW_AUDIT_LOG")
          assert.strictEqual((yield* call(BOB_ID, "GET", logsPath(S1_ID))).status, 403)
        }))

      it.effect("owner (CAROL in S2), administrator (BOB in S3), VIEW_AUDIT_LOG holder (CAROL in S4) → 200", () =>
        Effect.gen(function*() {
          const carol = yield* call(CAROL_ID, "GET", logsPath(S2_ID, "page_size=100"))
          assert.strictEqual(carol.status, 200, JSON.stringify(carol.body))
          assert.sameMembers(carol.body.logs.map((l: Entry) => l.item_identifier), state.s2)
          const bob = yield* call(BOB_ID, "GET", logsPath(S3_ID, "page_size=100"))
          assert.strictEqual(bob.status, 200, JSON.stringify(bob.body))
          assert.sameMembers(bob.body.logs.map((l: Entry) => l.item_identifier), state.s3)
          for (const l of bob.body.logs) assert.strictEqual(l.user_id, BOB_ID)
          const s4 = yield* call(CAROL_ID, "GET", logsPath(S4_ID, "", BOT2_ID))
          assert.strictEqual(s4.status, 200, JSON.stringify(s4.body))
          assert.deepStrictEqual(s4.body, { logs: [], page: 1, page_size: 10, page_max: 1 })
        }))
    })

    describe("isolation", () => {
      it.effect("another server's entries never appear", () =>
        Effect.gen(function*() {
          const s1 = yield* call(ALICE_ID, "GET", logsPath(S1_ID, "page_size=100"))
          assert.strictEqual(s1.status, 200)
          const ids = s1.body.logs.map((l: Entry) => l.item_identifier)
          assert.sameMembers(ids, [...state.s1Batch1, ...state.s1Batch2])
          for (const other of [...state.s2, ...state.s3]) assert.notInclude(ids, other)
          const entryIds = new Set<string>(s1.body.logs.map((l: Entry) => l.id))
          const s2 = yield* call(CAROL_ID, "GET", logsPath(S2_ID, "page_size=100"))
          for (const l of s2.body.logs) assert.isFalse(entryIds.has(l.id))
        }))
    })

    describe("pagination", () => {
      it.effect("defaults page 1, page_size 10; newest first; page_max = ceil(total / size); past the end → empty", () =>
        Effect.gen(function*() {
          const total = state.s1Batch1.length + state.s1Batch2.length // 12 form PUSH entries
          const first = yield* call(ALICE_ID, "GET", logsPath(S1_ID))
          assert.strictEqual(first.status, 200, JSON.stringify(first.body))
          assert.strictEqual(first.body.page, 1)
          assert.strictEqual(first.body.page_size, 10)
          assert.strictEqual(first.body.page_max, Math.ceil(total / 10))
          assert.strictEqual(first.body.logs.length, 10)
          assert.deepStrictEqual(Object.keys(first.body).sort(), ["logs", "page", "page_max", "page_size"])
          assert.deepStrictEqual(Object.keys(first.body.logs[0]).sort(), [
            "event_string", "event_type", "id", "item_identifier", "module_name", "timestamp", "user_avatar", "user_id", "user_name"
          ])

          const seen: Array<Entry> = []
          for (const page of [1, 2, 3]) {
            const r = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `page_size=5&page=${page}`))
            assert.strictEqual(r.status, 200)
            assert.strictEqual(r.body.page, page)
            assert.strictEqual(r.body.page_size, 5)
            assert.strictEqual(r.body.page_max, 3)
            assert.strictEqual(r.body.logs.length, page < 3 ? 5 : 2)
            seen.push(...r.body.logs)
          }
          assert.strictEqual(new Set(seen.map((l) => l.id)).size, total)
          // Newest first: the second batch precedes the first, in reverse creation order.
          assert.deepStrictEqual(seen.map((l) => l.item_identifier), [...state.s1Batch1, ...state.s1Batch2].reverse())
          for (let i = 1; i < seen.length; i++) {
            assert.isTrue(Date.parse(seen[i - 1]!.timestamp) >= Date.parse(seen[i]!.timestamp))
          }
          const past = yield* call(ALICE_ID, "GET", logsPath(S1_ID, "page_size=5&page=4"))
          assert.strictEqual(past.status, 200)
          assert.deepStrictEqual(past.body, { logs: [], page: 4, page_size: 5, page_max: 3 })
          const one = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `page_size=100`))
          assert.strictEqual(one.body.page_max, 1)
          const exact = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `page_size=12`))
          assert.strictEqual(exact.body.page_max, 1)
          const single = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `page_size=1&page=12`))
          assert.strictEqual(single.body.page_max, 12)
          assert.strictEqual(single.body.logs[0].item_identifier, state.s1Batch1[0])
        }))
    })

    describe("filters", () => {
      it.effect("module: only that module's entries", () =>
        Effect.gen(function*() {
          const forms = yield* call(ALICE_ID, "GET", logsPath(S1_ID, "module=forms&page_size=100"))
          assert.strictEqual(forms.body.logs.length, 12)
          for (const l of forms.body.logs) assert.strictEqual(l.module_name, "forms")
          const rss = yield* call(ALICE_ID, "GET", logsPath(S1_ID, "module=rss&page_size=100", BOT2_ID))
          assert.strictEqual(rss.status, 200, JSON.stringify(rss.body))
          assert.deepStrictEqual(rss.body.logs.map((l: Entry) => [l.module_name, l.event_type, l.item_identifier]), [
            ["rss", "DELETE", Number(state.rssFeed)],
            ["rss", "PUSH", Number(state.rssFeed)]
          ])
          const video = yield* call(ALICE_ID, "GET", logsPath(S1_ID, "module=video"))
          assert.deepStrictEqual(video.body, { logs: [], page: 1, page_size: 10, page_max: 1 })
        }))

      it.effect("start and end: ISO 8601, Unix seconds and Unix milliseconds", () =>
        Effect.gen(function*() {
          const ids = (r: { body: { logs: ReadonlyArray<Entry> } }) => r.body.logs.map((l) => l.item_identifier)
          const iso = new Date(state.boundary).toISOString()
          const after = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `module=forms&page_size=100&start=${encodeURIComponent(iso)}`))
          assert.strictEqual(after.status, 200, JSON.stringify(after.body))
          assert.sameMembers(ids(after), state.s1Batch2)
          assert.strictEqual(after.body.page_max, 1)
          const before = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `module=forms&page_size=100&end=${state.boundary}`))
          assert.strictEqual(before.status, 200, JSON.stringify(before.body))
          assert.sameMembers(ids(before), state.s1Batch1)
          const hourAgo = Math.floor(state.boundary / 1000) - 3600
          const all = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `module=forms&page_size=100&start=${hourAgo}`))
          assert.strictEqual(all.body.logs.length, 12)
          const none = yield* call(ALICE_ID, "GET", logsPath(S1_ID, `module=forms&page_size=100&end=${hourAgo}`))
          assert.deepStrictEqual(none.body.logs, [])
          const window = yield* call(
            ALICE_ID,
            "GET",
            logsPath(S1_ID, `module=forms&page_size=3&start=${state.boundary}&end=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)
          )
          assert.strictEqual(window.body.page_max, 2)
          assert.strictEqual(window.body.logs.length, 3)
        }))
    })

    describe("bad parameters → 400 naming the parameter", () => {
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["page_size=0", ["page_size"]],
        ["page_size=101", ["page_size"]],
        ["page_size=ten", ["page_size"]],
        ["page_size=1.5", ["page_size"]],
        ["page=0", ["page"]],
        ["page=-1", ["page"]],
        ["page=x", ["page"]],
        ["module=chat", ["module"]],
        ["start=yesterday", ["start"]],
        ["end=2024-13-01", ["end"]],
        ["start=2024-02-01T00:00:00Z&end=2024-01-01T00:00:00Z", ["start"]],
        ["start=1706745600&end=1704067200", ["start"]],
        ["page_size=0&page=0&module=nope&start=later&end=sooner", ["page_size", "page", "module", "start", "end"]]
      ]
      for (const [query, params] of cases) {
        it.effect(query, () =>
          Effect.gen(function*() {
            const r = yield* call(ALICE_ID, "GET", logsPath(S1_ID, query))
            assert.strictEqual(r.status, 400, JSON.stringify(r.body))
            assert.deepStrictEqual(Object.keys(r.body), ["errors"])
            for (const e of r.body.errors) assert.strictEqual(e.code, "Bad Request")
            assert.sameMembers(r.body.errors.map((e: { additionalProperties?: { path?: string } }) => e.additionalProperties?.path), [...params])
          }))
      }
      it.effect("a 400 does not hide a 403: the permission is checked first", () =>
        Effect.gen(function*() {
          assert.strictEqual((yield* call(ALICE_ID, "GET", logsPath(S2_ID, "page_size=0"))).status, 403)
        }))
    })
  })
}
