/**
 * The AuditStore token of a SqlClient: one frozen, empty object per client, the same for every
 * layer that asks. AuditLogSql and FormsRepoSql both take theirs from here, so on one client their
 * tokens are equal (the forms write adds its audit entry in its own statement), and on two
 * clients they differ (two writes). The client itself never leaves its layers.
 */
import type { SqlClient } from "effect/sql"
import type { AuditStore } from "../../services/audit/AuditLog.ts"

const tokens = new WeakMap<SqlClient.SqlClient, AuditStore>()

export const auditStoreToken = (sql: SqlClient.SqlClient): AuditStore => {
  const known = tokens.get(sql)
  if (known !== undefined) return known
  // The only place a token is made: the brand is a type, the value an identity and nothing more.
  const token = Object.freeze({}) as AuditStore
  tokens.set(sql, token)
  return token
}
