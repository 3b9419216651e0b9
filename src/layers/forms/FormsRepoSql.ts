/**
 * FormsRepo on PostgreSQL / PGlite (tables of migration 0001, functions of 0010: every read and
 * write one statement, its audit entry included when given). Database failures follow the one
 * policy of SqlFailure.ts: down → 503, a refused value of the form → 400 at its path, else a bug.
 * The functions it calls, as the database has them now: FormsRepoSql.functions.sql.
 */
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { FORM_FLAGS } from "../../domain/forms/Form.ts"
import type { FormFlag, FormSummary } from "../../domain/forms/Form.ts"
import { FORM_VERBS, FormsLimitReached, FormsRepo } from "../../services/forms/FormsRepo.ts"
import type { FormAudit, FormData, FormScope, ListSince } from "../../services/forms/FormsRepo.ts"
import { auditStoreToken } from "../audit/AuditStoreToken.ts"
import { toStored } from "./FormRows.ts"
import type { FormRow } from "./FormRows.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const STORAGE = "The forms storage"

export const FormsRepoSql = Layer.effect(FormsRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const db = sqlFailure(STORAGE)
  // Each span's options once: `Effect.withSpan(name)` captures a stack trace (a new Error) whenever
  // it is called, which in a `pipe` is on every request.
  const spans = {
    listSince: Effect.withSpan("FormsRepo.listSince"),
    find: Effect.withSpan("FormsRepo.find"),
    create: Effect.withSpan("FormsRepo.create"),
    update: Effect.withSpan("FormsRepo.update"),
    remove: Effect.withSpan("FormsRepo.remove")
  }
  // Writes carry the client's form: a string the database refuses is a 400 at its path in it.
  const write = (data: FormData) => sqlFailure(STORAGE, { input: data })

  // Each read or write is one call of a function of migration 0010 (lock, count, form, steps and
  // audit entry in one round trip), answering the form as stored with its steps; no row: none.
  const one = (rows: ReadonlyArray<FormRow>) => rows[0] === undefined ? Option.none() : Option.some(toStored(rows[0], rows[0].steps))
  const fields = (data: FormData) =>
    sql`${data.title}, ${data.color_hex}, ${data.channel_id}, ${json(data.fwd_channel_ids)}::jsonb,
      ${json(data.role_mentions)}::jsonb, ${json(data.public_mentions)}::jsonb, ${json(flagsOf(data))}::jsonb,
      ${data.taskboard_board}, ${stepsJson(data)}::jsonb`
  const audited = (audit: FormAudit | undefined) =>
    audit === undefined
      ? sql`NULL, NULL, NULL, NULL, NULL`
      : sql`${audit.actor.userId}, ${audit.actor.userName}, ${audit.actor.avatar}, ${audit.eventType}, ${FORM_VERBS[audit.eventType]}`

  // The scope's version (migration 0011) and, unless it is still `known`, its forms: one statement,
  // one snapshot. On a hit the LATERAL's condition is a one-time filter: the forms are not read
  // (EXPLAIN: "never executed"); OFFSET 0 keeps the version's lookup one InitPlan, not one per use.
  const listSince = (scope: FormScope, known: string | undefined) =>
    db(sql<ListRow>`SELECT v.version::text AS version, f.workflow_id, f.title, f.color_hex,
        f.flags @> '{"taskboard_integration": true}' AS taskboard_integration, f.flags @> '{"workflow_live": true}' AS workflow_live
      FROM (SELECT (SELECT c.version FROM form_counts c WHERE c.bot_id = ${scope.botId} AND c.server_id = ${scope.serverId}) AS version OFFSET 0) v
      LEFT JOIN LATERAL (SELECT * FROM forms f WHERE (v.version IS NULL OR v.version IS DISTINCT FROM ${known ?? null}::uuid)
        AND f.bot_id = ${scope.botId} AND f.server_id = ${scope.serverId}) f ON true
      ORDER BY f.workflow_id`).pipe(
      Effect.map((rows): ListSince => {
        const version = rows[0]?.version ?? undefined
        if (version !== undefined && version === known) return { version, forms: undefined }
        const forms: Array<FormSummary> = []
        for (const r of rows) {
          if (r.workflow_id === null) continue
          forms.push({
            workflow_id: Number(r.workflow_id),
            taskboard_integration: r.taskboard_integration === true,
            workflow_live: r.workflow_live === true,
            title: r.title,
            color_hex: r.color_hex
          })
        }
        return { version, forms }
      }),
      spans.listSince
    )

  // A create outside a transaction commits before its flush and only then waits for it (the
  // procedure of migration 0011, as redefined by 0014): the scope's row is not held through the
  // flush, and the answer comes once the create is flushed. Inside one (the caller commits) it is
  // the plain function.
  const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

  return FormsRepo.of({
    // AuditLogSql on this same client holds the same token: the entry then goes in our statement.
    writesAuditOf: (log) => log.store !== undefined && log.store === auditStoreToken(sql),
    list: (scope) => Effect.map(listSince(scope, undefined), (r) => r.forms ?? []),
    listSince,
    find: (scope, id, audit) =>
      db(sql<FormRow>`SELECT * FROM forms_read(${id}::int8, ${scope.botId}, ${scope.serverId}, ${audited(audit)})`).pipe(
        Effect.map(one),
        spans.find
      ),
    create: (scope, data, limit, audit) =>
      Effect.flatMap(inTransaction, (joined) =>
        write(data)(
          joined
            ? sql<FormRow>`SELECT * FROM forms_create(${scope.botId}, ${scope.serverId}, ${limit ?? null}::int8,
              ${fields(data)}, ${audited(audit)})`
            : sql<FormRow>`CALL forms_create_durable(${scope.botId}, ${scope.serverId}, ${limit ?? null}::int8,
              ${fields(data)}, ${audited(audit)})`
        )).pipe(
        // The function answers no row at the limit, the procedure one row of NULLs.
        Effect.flatMap((rows) =>
          rows[0] === undefined || rows[0].workflow_id === null
            ? Effect.fail(new FormsLimitReached({ limit: limit ?? 0 }))
            : Effect.succeed(toStored(rows[0], rows[0].steps))
        ),
        spans.create
      ),
    update: (scope, id, data, audit) =>
      write(data)(sql<FormRow>`SELECT * FROM forms_update(${id}::int8, ${scope.botId}, ${scope.serverId},
        ${fields(data)}, ${audited(audit)})`).pipe(Effect.map(one), spans.update),
    remove: (scope, id, audit) =>
      db(sql<FormRow>`SELECT * FROM forms_delete(${id}::int8, ${scope.botId}, ${scope.serverId}, ${audited(audit)})`).pipe(
        Effect.map(one),
        spans.remove
      ),
    transaction: (self) => db(sql.withTransaction(self))
  })
}))

interface ListRow {
  readonly version: string | null
  readonly workflow_id: bigint | number | string | null
  readonly title: string
  readonly color_hex: string
  readonly taskboard_integration: boolean | null
  readonly workflow_live: boolean | null
}

const json = (value: unknown) => JSON.stringify(value)

// Text columns get what the driver would have sent for a string parameter: UTF-8, where a lone
// surrogate becomes U+FFFD (JSON would escape it, and PostgreSQL would refuse the escape).
// `toWellFormed` (ES2024, Node 20+) is exactly that replacement, without a Unicode regex per string;
// the compiler's lib is ES2023, hence the cast.
const text = (value: string) => (value as string & { toWellFormed(): string }).toWellFormed()

/** The steps as `forms_steps_insert` reads them: `step_id` is the 1-based position. */
const stepsJson = (data: FormData) =>
  json(data.steps.map((s, i) => ({
    step_id: i + 1,
    type: text(s.type),
    string: text(s.string),
    answers_validation: s.answers_validation,
    char_limit_min: s.char_limit[0],
    char_limit_max: s.char_limit[1],
    alias: text(s.alias),
    taskboard_mapping: text(s.taskboard_mapping)
  })))

const flagsOf = (data: FormData): Record<FormFlag, boolean> => {
  const out = {} as Record<FormFlag, boolean>
  for (const f of FORM_FLAGS) out[f] = data[f]
  return out
}
