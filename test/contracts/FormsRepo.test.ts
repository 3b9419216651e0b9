/**
 * The FormsRepo contract on every layer: memory (the API tests' layer must behave like the SQL one),
 * and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL).
 */
import { Layer } from "effect"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { FormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { formsRepoContract } from "./FormsRepo.contract.ts"

formsRepoContract("FormsRepoMemory", FormsRepoMemory)
for (const kind of dbKinds) formsRepoContract(`FormsRepoSql on ${kind}`, FormsRepoSql.pipe(Layer.provide(testDb(kind))))
