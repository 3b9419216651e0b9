/**
 * The TaskboardPairings contract: which task-board team a server is paired with, and the team's key
 * and token read back as they were written, on every layer. Each test uses servers of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { Layer } from "effect"
import type { Pairing } from "../../src/services/taskboard/TaskboardPairings.ts"
import { TaskboardPairings } from "../../src/services/taskboard/TaskboardPairings.ts"

const pairing = (teamId: string, key: string, token: string): Pairing => ({
  teamId,
  key: Redacted.make(key),
  token: Redacted.make(token)
})

/** Comparable: the secrets' values instead of the Redacted boxes. */
const plain = (p: Pairing | undefined) =>
  p === undefined ? undefined : { teamId: p.teamId, key: Redacted.value(p.key), token: Redacted.value(p.token) }

export const taskboardPairingsContract = <E>(name: string, pairingsLayer: Layer.Layer<TaskboardPairings, E>) =>
  layer(pairingsLayer, { excludeTestServices: true })(`TaskboardPairings contract (${name})`, (it) => {
    it.effect("a pairing is read back whole: team, key and token (kept apart, not swapped); each server its own", () =>
      Effect.gen(function*() {
        const pairings = yield* TaskboardPairings
        yield* pairings.pair("410000000000000001", pairing("team-a", "key-a \"quoted\" ✓", "token-a"))
        yield* pairings.pair("410000000000000002", pairing("team-b", "key-b", "token-b"))
        assert.deepStrictEqual(plain(yield* pairings.get("410000000000000001")), {
          teamId: "team-a",
          key: "key-a \"quoted\" ✓",
          token: "token-a"
        })
        assert.deepStrictEqual(plain(yield* pairings.get("410000000000000002")), { teamId: "team-b", key: "key-b", token: "token-b" })
      }))

    it.effect("pairing a server again replaces its team and credentials", () =>
      Effect.gen(function*() {
        const pairings = yield* TaskboardPairings
        const server = "420000000000000001"
        yield* pairings.pair(server, pairing("team-old", "key-old", "token-old"))
        yield* pairings.pair(server, pairing("team-new", "key-new", "token-new"))
        assert.deepStrictEqual(plain(yield* pairings.get(server)), { teamId: "team-new", key: "key-new", token: "token-new" })
      }))

    it.effect("unpairing: true, and the server is unpaired; again, or a server never paired: false", () =>
      Effect.gen(function*() {
        const pairings = yield* TaskboardPairings
        const [server, other] = ["430000000000000001", "430000000000000002"]
        yield* pairings.pair(server, pairing("team-u", "key-u", "token-u"))
        yield* pairings.pair(other, pairing("team-v", "key-v", "token-v"))
        assert.isTrue(yield* pairings.unpair(server))
        assert.isUndefined(yield* pairings.get(server))
        assert.isFalse(yield* pairings.unpair(server))
        assert.isFalse(yield* pairings.unpair("439999999999999999"))
        assert.deepStrictEqual(plain(yield* pairings.get(other)), { teamId: "team-v", key: "key-v", token: "token-v" }, "the other server keeps its pairing")
      }))

    it.effect("a server never paired reads undefined, not an error; it can be paired after an unpair", () =>
      Effect.gen(function*() {
        const pairings = yield* TaskboardPairings
        const server = "440000000000000001"
        assert.isUndefined(yield* pairings.get(server))
        yield* pairings.pair(server, pairing("team-1", "key-1", "token-1"))
        yield* pairings.unpair(server)
        yield* pairings.pair(server, pairing("team-2", "key-2", "token-2"))
        assert.deepStrictEqual(plain(yield* pairings.get(server)), { teamId: "team-2", key: "key-2", token: "token-2" })
      }))
  })
