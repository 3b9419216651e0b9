/** The FeedsRepo contract on every layer: memory, and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL). */
import { Layer } from "effect"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { FeedsRepoMemory } from "../layers/FeedsRepoMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { feedsRepoContract } from "./FeedsRepo.contract.ts"

feedsRepoContract("FeedsRepoMemory", FeedsRepoMemory)
for (const kind of dbKinds) feedsRepoContract(`FeedsRepoSql on ${kind}`, FeedsRepoSql.pipe(Layer.provideMerge(testDb(kind))))
