/** Interaction ids already handled: new once, then not; ids older than an hour pruned (forms-runtime.md §1). */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeSeenInteractions } from "../../src/layers/submissions/SeenInteractionsSql.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { eventually } from "../utils/Eventually.ts"

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true })(`seen interactions on ${kind}`, (it) => {
    it.effect("an id is new once; an hour-old id is pruned by the next interaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO interactions_seen (id, seen_at) VALUES ('1', now() - interval '2 hours'), ('2', now() - interval '30 minutes')`
        const { firstSeen, prune } = yield* makeSeenInteractions
        assert.isTrue(yield* firstSeen("10"))
        assert.isFalse(yield* firstSeen("10"))
        assert.isFalse(yield* firstSeen("2"))
        // The prune runs beside the answer, not in it: it returns at once, the DELETE follows.
        yield* prune
        const ids = yield* eventually(
          Effect.map(sql<{ id: string }>`SELECT id FROM interactions_seen ORDER BY id`, (rows) => rows.map((r) => r.id)),
          (ids) => ids.length === 2,
          "the hour-old id pruned"
        )
        assert.deepStrictEqual(ids, ["10", "2"])
      }))
  })
}
