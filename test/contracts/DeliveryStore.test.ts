/**
 * The DeliveryStore contract on every layer: memory (over the memory feeds and bots), and SQL on
 * PGlite (and PostgreSQL with TEST_DATABASE_URL), each with the FeedsRepo and Bots of its kind.
 */
import { Layer } from "effect"
import { BotsSql } from "../../src/layers/platform/BotsSql.ts"
import { DeliveryStoreSql } from "../../src/layers/delivery/DeliveryStoreSql.ts"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"
import { DeliveryStoreMemory } from "../layers/DeliveryStoreMemory.ts"
import { FeedsRepoMemoryShared } from "../layers/FeedsRepoMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { deliveryStoreContract } from "./DeliveryStore.contract.ts"

const cipher = () => Cipher.layer(parseKeyring(generateKey()))

deliveryStoreContract(
  "DeliveryStoreMemory",
  DeliveryStoreMemory.pipe(Layer.provideMerge(Layer.mergeAll(FeedsRepoMemoryShared, BotsMemory([]), cipher())))
)

for (const kind of dbKinds) {
  deliveryStoreContract(
    `DeliveryStoreSql on ${kind}`,
    Layer.mergeAll(DeliveryStoreSql, FeedsRepoSql, BotsSql).pipe(Layer.provideMerge(cipher()), Layer.provide(testDb(kind)))
  )
}
