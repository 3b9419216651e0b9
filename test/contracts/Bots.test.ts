/** The Bots contract on every layer: memory, and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL). */
import { Layer } from "effect"
import { BotsSql } from "../../src/layers/platform/BotsSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { botsContract } from "./Bots.contract.ts"

botsContract("BotsMemory", BotsMemory([]))

for (const kind of dbKinds) {
  botsContract(`BotsSql on ${kind}`, BotsSql.pipe(Layer.provide(Layer.mergeAll(testDb(kind), Cipher.layer(parseKeyring(generateKey()))))))
}
