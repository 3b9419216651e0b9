/**
 * The AuditLog contract: the logs query (pages, order, filters by module and time, scope, the wire
 * shape, 400s naming each bad parameter) and append-then-query, on every layer. A layer comes with a
 * Seeder (test/audit/AuditFixtures.ts) that writes entries at chosen times.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import type { AuditLogQuery } from "../../src/domain/audit/AuditLog.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { BOT, entry, freshServer, seedMany, Seeder } from "../audit/AuditFixtures.ts"

const T0 = Date.UTC(2024, 0, 1)
const query = (serverId: string, q: AuditLogQuery = {}, botId = BOT) => AuditLog.use((log) => log.query({ botId, serverId }, q))
const ids = (page: { readonly logs: ReadonlyArray<{ readonly item_identifier: number | null }> }) =>
  page.logs.map((l) => l.item_identifier)
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i) // descending
const badPaths = (q: AuditLogQuery) =>
  Effect.flip(query("1", q)).pipe(
    Effect.map((e) => {
      if (e._tag !== "BadRequest") return assert.fail(`expected BadRequest, got ${e._tag}`)
      return e.problems.map((p) => p.additionalProperties?.path)
    })
  )

export const auditLogContract = (name: string, auditLayer: Layer.Layer<AuditLog | Seeder, unknown>) =>
  layer(auditLayer, { timeout: 60_000, excludeTestServices: true })(`AuditLog contract (${name})`, (it) => {
    it.effect("an empty log has page_max 1 and no entries", () =>
      Effect.gen(function*() {
        const page = yield* query(freshServer())
        assert.deepStrictEqual(page, { logs: [], page: 1, page_size: 10, page_max: 1 })
      }))

    it.effect("page_max is exact at 1, page_size and page_size + 1 entries", () =>
      Effect.gen(function*() {
        for (const [count, expected] of [[1, 1], [3, 1], [4, 2], [6, 2], [7, 3]] as const) {
          const server = freshServer()
          yield* seedMany(server, count)
          const page = yield* query(server, { page_size: "3" })
          assert.strictEqual(page.page_max, expected, `${count} entries`)
          assert.deepStrictEqual(ids(page), range(count, Math.max(1, count - 2)))
        }
      }))

    it.effect("defaults to page 1 of 10, newest first; pages cover every entry once", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedMany(server, 23)
        const first = yield* query(server)
        assert.deepStrictEqual([first.page, first.page_size, first.page_max], [1, 10, 3])
        assert.deepStrictEqual(ids(first), range(23, 14))
        const second = yield* query(server, { page: "2" })
        assert.deepStrictEqual(ids(second), range(13, 4))
        const last = yield* query(server, { page: "3" })
        assert.deepStrictEqual(ids(last), range(3, 1))
      }))

    it.effect("a page past the end is empty and carries the true page_max", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedMany(server, 5)
        const page = yield* query(server, { page: "4", page_size: "2" })
        assert.deepStrictEqual(page, { logs: [], page: 4, page_size: 2, page_max: 3 })
        const huge = yield* query(server, { page: "9007199254740991" })
        assert.deepStrictEqual([huge.logs.length, huge.page_max], [0, 1])
      }))

    it.effect("entries with equal timestamps keep a stable order (newest id first)", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedMany(server, 7, T0, 0)
        const pages = yield* Effect.forEach(["1", "2", "3"], (page) => query(server, { page, page_size: "3" }))
        assert.deepStrictEqual(pages.flatMap(ids), range(7, 1))
        const again = yield* query(server, { page: "2", page_size: "3" })
        assert.deepStrictEqual(ids(again), ids(pages[1]!))
      }))

    it.effect("entries have the wire shape and keep the actor as they were", () =>
      Effect.gen(function*() {
        const server = freshServer()
        const { seed } = yield* Seeder
        yield* seed(entry(server, 7, { userName: "old name", avatar: null, module: "rss", eventType: "DELETE" }), new Date(T0))
        yield* seed(entry(server, 8, { userName: "new name" }), new Date(T0 + 1500))
        const page = yield* query(server)
        const [newer, older] = page.logs
        assert.strictEqual(typeof newer!.id, "string")
        assert.deepStrictEqual({ ...older!, id: "" }, {
          id: "",
          timestamp: "2024-01-01T00:00:00.000Z",
          user_id: "42",
          user_name: "old name",
          user_avatar: null,
          module_name: "rss",
          item_identifier: 7,
          event_type: "DELETE",
          event_string: "event 7"
        })
        assert.deepStrictEqual([newer!.timestamp, newer!.user_name, newer!.user_avatar], ["2024-01-01T00:00:01.500Z", "new name", "a1b2"])
      }))

    it.effect("filters by module", () =>
      Effect.gen(function*() {
        const server = freshServer()
        const { seed } = yield* Seeder
        for (let i = 1; i <= 9; i++) {
          yield* seed(entry(server, i, { module: i % 3 === 0 ? "video" : "forms" }), new Date(T0 + i * 1000))
        }
        const video = yield* query(server, { module: "video", page_size: "2" })
        assert.deepStrictEqual([ids(video), video.page_max], [[9, 6], 2])
        const forms = yield* query(server, { module: "forms", page: "2", page_size: "4" })
        assert.deepStrictEqual([ids(forms), forms.page_max], [[2, 1], 2])
        const none = yield* query(server, { module: "photo" })
        assert.deepStrictEqual([none.logs.length, none.page_max], [0, 1])
      }))

    it.effect("filters by time: start only, end only, both, inclusive, in ISO, seconds and milliseconds", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedMany(server, 10, T0, 3_600_000) // 1..10, hourly from 2024-01-01T00:00Z
        const at = (n: number) => T0 + (n - 1) * 3_600_000
        const cases: ReadonlyArray<[AuditLogQuery, Array<number>]> = [
          [{ start: "2024-01-01T07:00:00Z" }, [10, 9, 8]],
          [{ start: "2024-01-01T06:59:59.999Z" }, [10, 9, 8]],
          [{ start: "2024-01-01T07:00:00.001Z" }, [10, 9]],
          [{ end: "2024-01-01T01:00:00Z" }, [2, 1]],
          [{ end: "2024-01-01" }, [1]],
          [{ start: "2024-01-01T03:00:00+01:00", end: "2024-01-01T04:30:00" }, [5, 4, 3]],
          [{ start: String(at(4) / 1000), end: String(at(6) / 1000) }, [6, 5, 4]],
          [{ start: String(at(4) + 1), end: String(at(6)) }, [6, 5]],
          [{ start: String(at(3)), end: String(at(3)) }, [3]],
          [{ start: "2025-01-01T00:00:00Z" }, []]
        ]
        for (const [q, expected] of cases) {
          const page = yield* query(server, q)
          assert.deepStrictEqual(ids(page), expected, JSON.stringify(q))
          assert.strictEqual(page.page_max, 1)
        }
        const both = yield* query(server, { start: String(at(2) / 1000), end: "2024-01-01T08:00:00.000Z", page_size: "3", page: "2" })
        assert.deepStrictEqual([ids(both), both.page_max], [[6, 5, 4], 3])
      }))

    it.effect("another server's or bot's entries never appear", () =>
      Effect.gen(function*() {
        const server = freshServer()
        const other = freshServer()
        const { seed } = yield* Seeder
        yield* seed(entry(server, 1), new Date(T0))
        yield* seed(entry(other, 2), new Date(T0 + 1))
        yield* seed(entry(server, 3, { botId: "200" }), new Date(T0 + 2))
        const page = yield* query(server)
        assert.deepStrictEqual([ids(page), page.page_max], [[1], 1])
        const otherBot = yield* query(server, {}, "200")
        assert.deepStrictEqual(ids(otherBot), [3])
      }))

    it.effect("append then query through the service", () =>
      Effect.gen(function*() {
        const server = freshServer()
        const log = yield* AuditLog
        yield* log.append(entry(server, 11, { module: "forum" }))
        yield* log.append(entry(server, 12, { module: "forum", eventType: "PATCH" }))
        const page = yield* query(server, { module: "forum" })
        assert.deepStrictEqual(ids(page), [12, 11])
        assert.deepStrictEqual(page.logs.map((l) => l.event_type), ["PATCH", "PUSH"])
      }))

    it.effect("invalid parameters are a 400 naming each parameter", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<[AuditLogQuery, Array<string>]> = [
          [{ page_size: "0" }, ["page_size"]],
          [{ page_size: "101" }, ["page_size"]],
          [{ page_size: "2.5" }, ["page_size"]],
          [{ page_size: "ten" }, ["page_size"]],
          [{ page_size: "" }, ["page_size"]],
          [{ page: "0" }, ["page"]],
          [{ page: "-1" }, ["page"]],
          [{ page: "1e3" }, ["page"]],
          [{ module: "chess" }, ["module"]],
          [{ module: "" }, ["module"]],
          [{ start: "yesterday" }, ["start"]],
          [{ end: "2024-13-01" }, ["end"]],
          [{ end: "2023-02-29" }, ["end"]],
          [{ start: "2024-01-01T24:00:00Z" }, ["start"]],
          [{ start: "1.5" }, ["start"]],
          [{ start: "2024-01-02", end: "2024-01-01" }, ["start"]],
          [{ start: "1704067201", end: "1704067200000" }, ["start"]],
          [{ page_size: "500", page: "x", module: "nope", end: "soon" }, ["module", "end", "page_size", "page"]]
        ]
        for (const [q, expected] of cases) {
          assert.deepStrictEqual(yield* badPaths(q), expected, JSON.stringify(q))
        }
      }))
  })
