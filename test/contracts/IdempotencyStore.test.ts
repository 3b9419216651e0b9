/**
 * The IdempotencyStore contract on every layer: memory, and SQL on PGlite (and PostgreSQL with
 * TEST_DATABASE_URL). What only the SQL layer promises (the work's writes and the key commit
 * together, or neither) is in test/infra/IdempotencyStoreSql.test.ts.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeIdempotencyStoreSql } from "../../src/layers/infra/IdempotencyStoreSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { IdempotencyStore } from "../../src/services/infra/IdempotencyStore.ts"
import { backdate, IdempotencyStoreMemory } from "../layers/IdempotencyStoreMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { idempotencyStoreContract } from "./IdempotencyStore.contract.ts"

idempotencyStoreContract("IdempotencyStoreMemory", IdempotencyStoreMemory, {
  age: (claim, hours) => Effect.flatMap(IdempotencyStore, (s) => backdate(s, claim, hours))
})

for (const kind of dbKinds) {
  idempotencyStoreContract(
    `IdempotencyStoreSql on ${kind}`,
    makeIdempotencyStoreSql({ every: "1 hour" }).pipe(
      Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
      Layer.provideMerge(testDb(kind))
    ),
    {
      age: (claim, hours) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`UPDATE idempotency_keys SET created_at = now() - ${hours} * interval '1 hour'
            WHERE user_id = ${claim.userId} AND key = ${claim.key}`),
      oneConnection: kind === "pglite"
    }
  )
}
