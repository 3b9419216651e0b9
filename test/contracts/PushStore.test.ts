/**
 * The PushStore contract on every layer: memory (over the memory DeliveryStore and feeds), and SQL
 * on PGlite (and PostgreSQL with TEST_DATABASE_URL), each with the DeliveryStore and FeedsRepo of
 * its kind, through which the suite stores sources and feeds.
 */
import { Layer } from "effect"
import { PushStoreSql } from "../../src/layers/push/PushStoreSql.ts"
import { BotsSql } from "../../src/layers/platform/BotsSql.ts"
import { DeliveryStoreSql } from "../../src/layers/delivery/DeliveryStoreSql.ts"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"
import { DeliveryStoreMemory } from "../layers/DeliveryStoreMemory.ts"
import { FeedsRepoMemoryShared } from "../layers/FeedsRepoMemory.ts"
import { PushStoreMemory } from "../layers/PushStoreMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { pushStoreContract } from "./PushStore.contract.ts"

const cipher = () => Cipher.layer(parseKeyring(generateKey()))

pushStoreContract(
  "PushStoreMemory",
  PushStoreMemory.pipe(
    Layer.provideMerge(DeliveryStoreMemory),
    Layer.provideMerge(Layer.mergeAll(FeedsRepoMemoryShared, BotsMemory([]), cipher()))
  )
)

for (const kind of dbKinds) {
  pushStoreContract(
    `PushStoreSql on ${kind}`,
    Layer.mergeAll(PushStoreSql, DeliveryStoreSql, FeedsRepoSql, BotsSql).pipe(Layer.provideMerge(cipher()), Layer.provide(testDb(kind)))
  )
}
