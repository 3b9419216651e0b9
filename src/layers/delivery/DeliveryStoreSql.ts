/**
 * DeliveryStore on PostgreSQL / PGlite (tables of migration 0005, and `feeds`, `bots`). Every
 * statement runs on the ambient SqlClient, so it joins the caller's `sql.withTransaction`; failures
 * follow SqlFailure.ts (down → 503; nothing here stores a client's value, so a refusal is our bug),
 * through DeliveryStoreRun.ts. Rows are read through DeliveryRows.ts. The calls live in two halves:
 * sources and their polls (DeliverySourcesSql.ts), feeds and their deliveries (DeliveryFeedsSql.ts),
 * the sends with no answer (DeliveryUncertainSql.ts), and crossposts (DeliveryCrosspostSql.ts).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DeliveryStore } from "../../services/delivery/DeliveryStore.ts"
import { DeliveryCrosspostSql } from "./DeliveryCrosspostSql.ts"
import { DeliveryFeedsSql } from "./DeliveryFeedsSql.ts"
import { DeliverySourcesSql } from "./DeliverySourcesSql.ts"
import { db } from "./DeliveryStoreRun.ts"
import { DeliveryUncertainSql } from "./DeliveryUncertainSql.ts"

export const DeliveryStoreSql = Layer.effect(DeliveryStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sources = yield* DeliverySourcesSql
  const feeds = yield* DeliveryFeedsSql
  const uncertain = yield* DeliveryUncertainSql
  const crossposts = yield* DeliveryCrosspostSql
  return DeliveryStore.of({
    transaction: (self) => sql.withTransaction(self).pipe(db),
    ...sources,
    ...feeds,
    ...uncertain,
    ...crossposts
  })
}))
