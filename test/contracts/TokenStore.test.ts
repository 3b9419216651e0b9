/**
 * The TokenStore contract on every layer: memory (bare and behind the cache), and SQL on PGlite (and
 * PostgreSQL with TEST_DATABASE_URL, also behind the cache that listens for revocations, as deployed).
 */
import { Layer } from "effect"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { TokenStoreListener } from "../../src/layers/auth/TokenStoreListener.ts"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { tokenStoreContract } from "./TokenStore.contract.ts"

tokenStoreContract("TokenStoreMemory", TokenStoreMemory)
tokenStoreContract("TokenStoreCached over TokenStoreMemory", TokenStoreCached(60_000).pipe(Layer.provide(TokenStoreMemory)))
for (const kind of dbKinds) tokenStoreContract(`TokenStoreSql on ${kind}`, TokenStoreSql.pipe(Layer.provideMerge(testDb(kind))))
if (dbKinds.includes("postgres")) {
  tokenStoreContract(
    "TokenStoreCached with TokenStoreListener over TokenStoreSql on postgres",
    TokenStoreCached(60_000, TokenStoreListener).pipe(Layer.provide(TokenStoreSql), Layer.provideMerge(testDb("postgres")))
  )
}
