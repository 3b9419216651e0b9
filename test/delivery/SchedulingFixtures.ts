/**
 * DeliveryScheduling alone, as an API process builds it (no worker): the SQL store, pg-boss in a
 * schema of the test's own, a 60 s poll interval and, when given, a PushBackstop whose intervals the
 * test decides. Clocks pinned to an instant (DeliveryHarness' `pinnedAt`); the poll jobs asked for "now" read back from pg-boss.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { JobEnginePgBoss } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { DeliveryStoreSql } from "../../src/layers/delivery/DeliveryStoreSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { PollQueue } from "../../src/services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../../src/services/delivery/DeliveryScheduling.ts"
import { DeliverySettings } from "../../src/services/delivery/DeliverySettings.ts"
import { PushBackstop } from "../../src/services/push/PushBackstop.ts"
import { testDb } from "../utils/Db.ts"
import type { DbKind } from "../utils/Db.ts"
import { dropSchemaAtEnd } from "./DeliveryFixtures.ts"

/** A backstop answering the test's interval for each source (synchronously). */
export interface BackstopScript {
  readonly intervalOf: (source: { readonly id: string; readonly module: string }, interval: number) => number
}

export const schedulingLayer = (kind: DbKind, pgbossSchema: string, backstop?: BackstopScript) => {
  const push = backstop === undefined
    ? Layer.empty
    : Layer.succeed(PushBackstop, PushBackstop.of({ intervalOf: (source, interval) => Effect.sync(() => backstop.intervalOf(source, interval)) }))
  return DeliveryScheduling.layer.pipe(
    Layer.provideMerge(DeliveryStoreSql),
    Layer.provideMerge(Layer.mergeAll(
      JobEnginePgBoss({ schema: pgbossSchema, pollingInterval: "0.5 seconds", drainTimeout: "10 seconds" }),
      DeliverySettings.layer({ pollIntervalSeconds: 60 }),
      Cipher.layer(parseKeyring(generateKey())),
      push
    )),
    Layer.provideMerge(dropSchemaAtEnd(pgbossSchema)),
    Layer.provideMerge(testDb(kind)),
    Layer.orDie
  )
}

/** The poll jobs asked for now (no slot) of a source, oldest first. */
export const nowPollJobs = (pgbossSchema: string, sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; state: string }>`SELECT id::text AS id, state FROM ${sql(pgbossSchema)}.job
      WHERE name = ${PollQueue.name} AND data->>'sourceId' = ${sourceId} AND data->'slot' IS NULL
      ORDER BY created_on, id`)
