/**
 * A FROM item that turns `synchronous_commit` off for the statement's own transaction (`set_config`
 * with `is_local`): the commit returns without waiting for the WAL flush. Only for writes whose
 * loss in a crash is harmless (an interaction id seen, a draft's page); the WAL keeps their order,
 * so a later durable commit flushes them too. One row, so it joins any statement as a cross join.
 */
import type { SqlClient } from "effect/sql"

export const asyncCommit = (sql: SqlClient.SqlClient) =>
  sql`(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`
