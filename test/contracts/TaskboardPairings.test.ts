/** The TaskboardPairings contract on every layer: memory, and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL). */
import { Layer } from "effect"
import { TaskboardPairingsSql } from "../../src/layers/taskboard/TaskboardPairingsSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { TaskboardPairingsMemory } from "../layers/TaskboardPairingsMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { taskboardPairingsContract } from "./TaskboardPairings.contract.ts"

taskboardPairingsContract("TaskboardPairingsMemory", TaskboardPairingsMemory())

for (const kind of dbKinds) {
  taskboardPairingsContract(
    `TaskboardPairingsSql on ${kind}`,
    TaskboardPairingsSql.pipe(Layer.provide(Layer.mergeAll(testDb(kind), Cipher.layer(parseKeyring(generateKey())))))
  )
}
