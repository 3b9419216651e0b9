/** The AuditLog contract on every layer: memory, and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL). */
import { targets } from "../audit/AuditFixtures.ts"
import { auditLogContract } from "./AuditLog.contract.ts"

for (const target of targets) auditLogContract(target.name, target.layer)
