/** What only the SQL layer of FeedsRepo shows: the stored row (the contract is test/contracts/FeedsRepo.contract.ts). */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { feed } from "../contracts/FeedsRepo.contract.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

for (const kind of dbKinds) {
  layer(FeedsRepoSql.pipe(Layer.provideMerge(testDb(kind))), { excludeTestServices: true })(`feeds table on ${kind}`, (it) => {
    it.effect("stores the ciphertext only, and jsonb options as objects", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const sql = yield* SqlClient.SqlClient
        const r = yield* repo.insert(feed("2001"), 50)
        if (r._tag !== "Inserted") return assert.fail(r._tag)
        const rows = yield* sql<{ webhook_token_enc: string; webhook_options: unknown }>`
          SELECT webhook_token_enc, webhook_options FROM feeds WHERE id = ${r.feed.id}`
        assert.strictEqual(rows[0]?.webhook_token_enc, "v1.k1.nonce.cipher")
        assert.deepStrictEqual(rows[0]?.webhook_options, feed("2001").webhookOptions)
      }))
  })
}
