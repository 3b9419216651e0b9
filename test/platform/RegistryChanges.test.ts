/**
 * Changes made by another process reach a running instance (issue 13, item 5): two instances of the
 * SQL layers on one database, one of them standing for the operator's CLI. The bots registry is
 * kept in memory for its TTL, so a bot removed or added elsewhere is seen once the TTL has passed
 * (and at once by the instance that wrote); a task-board pairing is read on every request, so the
 * live Trello client (against the sandbox's twin) follows a pairing made or removed elsewhere at
 * the next request. On PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { BotsSqlWith } from "../../src/layers/platform/BotsSql.ts"
import { TaskboardPairingsSql } from "../../src/layers/taskboard/TaskboardPairingsSql.ts"
import { TaskBoardTrello } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S1_TASKBOARD_TEAM } from "../../src/sandbox/Seed.ts"
import { Bots } from "../../src/services/platform/Bots.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"
import { TaskboardPairings } from "../../src/services/taskboard/TaskboardPairings.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const TTL_MS = 300

/** A layer built on its own: two builds of one layer are two instances (two processes, as far as caches go). */
const instance = <S, I>(tag: Context.Key<I, S>, l: Layer.Layer<I, unknown, any>) =>
  Effect.map(Layer.build(l), (ctx) => Context.get(ctx, tag))

const ids = (bots: Bots["Service"]) => Effect.map(bots.list, (list) => list.map((b) => b.id))

for (const kind of dbKinds) {
  const shared = Layer.mergeAll(testDb(kind), Cipher.layer(parseKeyring(generateKey())), SandboxServer.layer(), FetchHttpClient.layer)

  layer(shared, { excludeTestServices: true, timeout: 60_000 })(`changes from another process (${kind})`, (it) => {
    it.effect("a bot removed or added elsewhere is seen within the registry's TTL; the writer sees it at once", () =>
      Effect.gen(function*() {
        const server = yield* instance(Bots, BotsSqlWith({ ttl: `${TTL_MS} millis` }))
        const cli = yield* instance(Bots, BotsSqlWith({ ttl: `${TTL_MS} millis` }))
        const id = "930000000000000001"
        yield* cli.upsert({ id, name: "Elsewhere", icon: null, token: Redacted.make("token-930") })
        assert.include(yield* ids(cli), id, "the writer sees its write at once")
        yield* Effect.sleep(TTL_MS + 100)
        assert.include(yield* ids(server), id)
        assert.strictEqual((yield* server.get(id))?.name, "Elsewhere")

        assert.isTrue(yield* cli.remove(id))
        assert.notInclude(yield* ids(cli), id)
        // Within the TTL the server may still serve its copy; after it, never.
        yield* Effect.sleep(TTL_MS + 100)
        assert.notInclude(yield* ids(server), id)
        assert.isUndefined(yield* server.get(id))
      }))

    it.effect("a pairing made or removed elsewhere applies to the next task-board request", () =>
      Effect.gen(function*() {
        const sandbox = yield* SandboxServer
        const { baseUrl } = SandboxMode.taskBoardOptions(sandbox.url, "5 seconds")
        const board = yield* instance(
          TaskBoard,
          TaskBoardTrello.layerPairings({ baseUrl, timeout: "5 seconds", cacheTtl: "1 hour" }).pipe(Layer.provide(TaskboardPairingsSql))
        )
        const cli = yield* instance(TaskboardPairings, TaskboardPairingsSql)
        assert.isUndefined(yield* board.boards(S1_ID), "not paired yet")
        yield* cli.pair(S1_ID, { teamId: S1_TASKBOARD_TEAM, key: Redacted.make("sandbox"), token: Redacted.make("sandbox") })
        assert.isAbove((yield* board.boards(S1_ID))?.length ?? 0, 0, "paired: the team's boards")
        assert.isTrue(yield* cli.unpair(S1_ID))
        assert.isUndefined(yield* board.boards(S1_ID), "unpaired, although the boards are cached for an hour")
      }))
  })
}
