/**
 * FormsRepo on PostgreSQL / PGlite (tables of migration 0001). Database failures follow the one
 * policy of SqlFailure.ts: down → 503, a refused value of the form → 400 at its path, else a bug.
 */
import { Array as Arr, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { FORM_FLAGS } from "../../domain/Form.ts"
import type { FormFlag, StoredForm } from "../../domain/Form.ts"
import { FormsLimitReached, FormsRepo } from "../../services/FormsRepo.ts"
import type { FormData } from "../../services/FormsRepo.ts"
import { sqlFailure } from "./SqlFailure.ts"

const STORAGE = "The forms storage"

export const FormsRepoSql = Layer.effect(FormsRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const db = sqlFailure(STORAGE)
  // Writes carry the client's form: a string the database refuses is a 400 at its path in it.
  const write = (data: FormData) => sqlFailure(STORAGE, { input: data })

  const steps = (id: number) =>
    sql<StepRow>`SELECT step_id, type, string, answers_validation, char_limit_min, char_limit_max, alias, taskboard_mapping
      FROM form_steps WHERE workflow_id = ${id} ORDER BY step_id`

  const load = (row: FormRow) => Effect.map(steps(Number(row.workflow_id)), (s) => toStored(row, s))

  const insertSteps = (id: number, data: FormData) => {
    const rows: ReadonlyArray<Record<string, unknown>> = data.steps.map((s, i) => ({
      workflow_id: id,
      step_id: i + 1,
      type: s.type,
      string: s.string,
      answers_validation: json(s.answers_validation),
      char_limit_min: s.char_limit[0],
      char_limit_max: s.char_limit[1],
      alias: s.alias,
      taskboard_mapping: s.taskboard_mapping
    }))
    // RETURNING gives the rows as stored (what a SELECT would read back), without a further round trip.
    return Arr.isReadonlyArrayNonEmpty(rows)
      ? Effect.map(
        sql<StepRow>`INSERT INTO form_steps ${sql.insert(rows)}
          RETURNING step_id, type, string, answers_validation, char_limit_min, char_limit_max, alias, taskboard_mapping`,
        (stored) => [...stored].sort((a, b) => a.step_id - b.step_id)
      )
      : Effect.succeed<ReadonlyArray<StepRow>>([])
  }

  // Inside the caller's transaction (Forms puts the audit entry in it) the statements already commit
  // together: a nested one would only add a SAVEPOINT and its RELEASE (two round trips) per write.
  // (A caller that recovered from a failure here and still committed would keep a partial write;
  // Forms never does: every failure ends its transaction.)
  const atomic = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(sql.transactionService),
      (open) => open._tag === "Some" ? self : sql.withTransaction(self)
    )

  const columns = sql`workflow_id, title, color_hex, channel_id, fwd_channel_ids, role_mentions, public_mentions,
    flags, taskboard_board, created_at`

  return FormsRepo.of({
    list: (scope) =>
      // Only the summary's columns: the list is the hot read of the module.
      db(sql<Pick<FormRow, "workflow_id" | "title" | "color_hex" | "flags">>`SELECT workflow_id, title, color_hex, flags
        FROM forms WHERE bot_id = ${scope.botId} AND server_id = ${scope.serverId} ORDER BY workflow_id`).pipe(
        Effect.map((rows) => rows.map((r) => {
          const flags = toFlags(r.flags)
          return {
            workflow_id: Number(r.workflow_id),
            taskboard_integration: flags.taskboard_integration,
            workflow_live: flags.workflow_live,
            title: r.title,
            color_hex: r.color_hex
          }
        })),
        Effect.withSpan("FormsRepo.list")
      ),
    find: (scope, id) =>
      db(Effect.gen(function*() {
        const rows = yield* sql<FormRow>`SELECT ${columns} FROM forms
          WHERE workflow_id = ${id} AND bot_id = ${scope.botId} AND server_id = ${scope.serverId}`
        return rows[0] === undefined ? Option.none() : Option.some(yield* load(rows[0]))
      })).pipe(Effect.withSpan("FormsRepo.find")),
    create: (scope, data, limit) =>
      write(data)(atomic(Effect.gen(function*() {
        if (limit !== undefined) {
          // Serialises creates of one scope until commit, so the count and the insert see the same state.
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`forms:${scope.botId}:${scope.serverId}`}))`
          const counted = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM forms
            WHERE bot_id = ${scope.botId} AND server_id = ${scope.serverId}`
          if ((counted[0]?.n ?? 0) >= limit) return yield* new FormsLimitReached({ limit })
        }
        const rows = yield* sql<FormRow>`INSERT INTO forms (bot_id, server_id, title, color_hex, channel_id,
            fwd_channel_ids, role_mentions, public_mentions, flags, taskboard_board)
          VALUES (${scope.botId}, ${scope.serverId}, ${data.title}, ${data.color_hex}, ${data.channel_id},
            ${json(data.fwd_channel_ids)}::jsonb, ${json(data.role_mentions)}::jsonb,
            ${json(data.public_mentions)}::jsonb, ${json(flagsOf(data))}::jsonb, ${data.taskboard_board})
          RETURNING ${columns}`
        const row = rows[0]!
        return toStored(row, yield* insertSteps(Number(row.workflow_id), data))
      }))).pipe(Effect.withSpan("FormsRepo.create")),
    update: (scope, id, data) =>
      write(data)(atomic(Effect.gen(function*() {
        // The row lock serialises concurrent writers of one form: steps are never a mix of two versions.
        const locked = yield* sql`SELECT workflow_id FROM forms
          WHERE workflow_id = ${id} AND bot_id = ${scope.botId} AND server_id = ${scope.serverId} FOR UPDATE`
        if (locked.length === 0) return Option.none()
        const rows = yield* sql<FormRow>`UPDATE forms SET title = ${data.title}, color_hex = ${data.color_hex},
            channel_id = ${data.channel_id}, fwd_channel_ids = ${json(data.fwd_channel_ids)}::jsonb,
            role_mentions = ${json(data.role_mentions)}::jsonb, public_mentions = ${json(data.public_mentions)}::jsonb,
            flags = ${json(flagsOf(data))}::jsonb, taskboard_board = ${data.taskboard_board}, updated_at = now()
          WHERE workflow_id = ${id} RETURNING ${columns}`
        yield* sql`DELETE FROM form_steps WHERE workflow_id = ${id}`
        return Option.some(toStored(rows[0]!, yield* insertSteps(id, data)))
      }))).pipe(Effect.withSpan("FormsRepo.update")),
    remove: (scope, id) =>
      db(atomic(Effect.gen(function*() {
        const rows = yield* sql<FormRow>`SELECT ${columns} FROM forms
          WHERE workflow_id = ${id} AND bot_id = ${scope.botId} AND server_id = ${scope.serverId} FOR UPDATE`
        if (rows[0] === undefined) return Option.none()
        const stored = yield* load(rows[0])
        yield* sql`DELETE FROM forms WHERE workflow_id = ${id}`
        return Option.some(stored)
      }))).pipe(Effect.withSpan("FormsRepo.remove")),
    transaction: (self) => db(sql.withTransaction(self))
  })
}))

interface FormRow {
  readonly workflow_id: bigint | number | string
  readonly title: string
  readonly color_hex: string
  readonly channel_id: string | null
  readonly fwd_channel_ids: ReadonlyArray<string>
  readonly role_mentions: ReadonlyArray<string>
  readonly public_mentions: ReadonlyArray<string>
  readonly flags: Partial<Record<FormFlag, boolean>>
  readonly taskboard_board: string
  readonly created_at: Date
}

interface StepRow {
  readonly step_id: number
  readonly type: "message" | "reaction"
  readonly string: string
  readonly answers_validation: ReadonlyArray<string>
  readonly char_limit_min: number
  readonly char_limit_max: number
  readonly alias: string | null
  readonly taskboard_mapping: string | null
}

const json = (value: unknown) => JSON.stringify(value)

const flagsOf = (data: FormData): Record<FormFlag, boolean> =>
  Object.fromEntries(FORM_FLAGS.map((f) => [f, data[f]])) as Record<FormFlag, boolean>

const toFlags = (flags: Partial<Record<FormFlag, boolean>>): Record<FormFlag, boolean> =>
  Object.fromEntries(FORM_FLAGS.map((f) => [f, flags[f] === true])) as Record<FormFlag, boolean>

const toStored = (row: FormRow, steps: ReadonlyArray<StepRow>): StoredForm => ({
  workflow_id: Number(row.workflow_id),
  timestamp_created: row.created_at.toISOString(),
  title: row.title,
  color_hex: row.color_hex,
  channel_id: row.channel_id,
  fwd_channel_ids: row.fwd_channel_ids,
  role_mentions: row.role_mentions,
  public_mentions: row.public_mentions,
  taskboard_board: row.taskboard_board,
  ...toFlags(row.flags),
  steps: steps.map((s) => ({
    step_id: s.step_id,
    type: s.type,
    string: s.string,
    answers_validation: s.answers_validation,
    char_limit: [s.char_limit_min, s.char_limit_max] as const,
    // Rows written before "" meant unset may hold NULL: the contract's Strings are never null.
    alias: s.alias ?? "",
    taskboard_mapping: s.taskboard_mapping ?? ""
  }))
})
