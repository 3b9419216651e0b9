/** Shared data and small fakes of the forms suites (not a test file: vitest runs only *.test.ts). */
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { Board, FormInput } from "../../src/domain/forms/Form.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import type { ServerAccess } from "../../src/services/platform/Directory.ts"
import type { FormData } from "../../src/services/forms/FormsRepo.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"
import { boardWritesUnpaired } from "../layers/TaskBoardMemory.ts"

export const BOT = "900000000000000001"
export const SERVER = "800000000000000001"
export const OTHER_SERVER = "800000000000000002"
export const UNPAIRED_SERVER = "800000000000000003"

export const TEXT = "700000000000000001"
export const NEWS = "700000000000000002"
export const VOICE = "700000000000000003"
export const CATEGORY = "700000000000000004"
export const OTHER_TEXT = "700000000000000009"
export const ROLE = "600000000000000001"
export const ROLE2 = "600000000000000002"
export const OTHER_ROLE = "600000000000000009"

export const BOARDS: ReadonlyArray<Board> = [{ id: "b-1", name: "Roadmap" }, { id: "b-2", name: "Bugs" }]

const actor = { userId: "500000000000000001", userName: "manager", avatar: null }

export const access = (serverId = SERVER, botId = BOT): ServerAccess => ({
  botId,
  botToken: Redacted.make("bot-token"),
  serverId,
  channels: serverId === OTHER_SERVER
    ? [{ id: OTHER_TEXT, name: "elsewhere", type: 0 }]
    : [
      { id: TEXT, name: "general", type: 0 },
      { id: NEWS, name: "announcements", type: 5 },
      { id: VOICE, name: "lounge", type: 2 },
      { id: CATEGORY, name: "Text channels", type: 4 }
    ],
  roles: serverId === OTHER_SERVER
    ? [{ id: OTHER_ROLE, name: "others", color: 0, permissions: "0", position: 1 }]
    : [
      { id: ROLE, name: "moderators", color: 0xff0000, permissions: "0", position: 2 },
      { id: ROLE2, name: "members", color: 0, permissions: "0", position: 1 }
    ],
  actor
})

/** A task board paired with SERVER and OTHER_SERVER, not with UNPAIRED_SERVER. */
export const TaskBoardFake = Layer.succeed(TaskBoard, TaskBoard.of({
  boards: (serverId) => Effect.succeed(serverId === UNPAIRED_SERVER ? undefined : BOARDS),
  ...boardWritesUnpaired
}))

/** Makes the next audit appends fail after their row was written (to prove the rollback). */
export class AuditFailure extends Context.Service<AuditFailure, { failing: boolean }>()("test/AuditFailure") {}

/** The real SQL AuditLog (it joins the ambient transaction), whose appends can be made to fail after writing their row. */
export const AuditLogSqlFailing = Layer.effect(AuditLog, Effect.gen(function*() {
  const real = yield* AuditLog
  const failure = yield* AuditFailure
  return AuditLog.of({
    append: (e) =>
      Effect.andThen(real.append(e), failure.failing ? Effect.fail(ServiceUnavailable.of("audit log failed (test)", 5)) : Effect.void),
    query: real.query
  })
})).pipe(
  Layer.provide(AuditLogSql),
  Layer.provideMerge(Layer.sync(AuditFailure, () => ({ failing: false })))
)

export interface AuditRow {
  readonly server_id: string
  readonly module_name: string
  readonly item_identifier: string | number | bigint | null
  readonly event_type: string
  readonly event_string: string
}

/** The scope's counter row that the forms limit reads (migration 0010), kept by triggers on `forms`; undefined: no row. */
export const formCounter = (serverId: string, botId = BOT) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: string }>`SELECT n::text AS n FROM form_counts WHERE bot_id = ${botId} AND server_id = ${serverId}`
    return rows[0] === undefined ? undefined : Number(rows[0].n)
  })

export const auditRows = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<AuditRow>`SELECT server_id, module_name, item_identifier, event_type, event_string
      FROM audit_entries WHERE server_id = ${serverId} ORDER BY id`
  })

export const step = (text: string, extra: Partial<FormData["steps"][number]> = {}): FormData["steps"][number] => ({
  type: "message",
  string: text,
  answers_validation: [],
  char_limit: [1, 2000],
  alias: "",
  taskboard_mapping: "",
  ...extra
})

export const formData = (title: string, steps: FormData["steps"] = [], extra: Partial<FormData> = {}): FormData => ({
  title,
  color_hex: "#00d084",
  channel_id: null,
  fwd_channel_ids: [],
  role_mentions: [],
  public_mentions: [],
  workflow_live: false,
  taskboard_integration: false,
  anonymize: false,
  disable_downvote: false,
  disable_upvote: false,
  extended_embed: false,
  highlight_attachments: false,
  anonymize_rejection: false,
  disable_mentions: false,
  disable_priorities: false,
  taskboard_board: "0",
  steps,
  ...extra
})

export const input = (extra: Partial<FormInput> = {}): FormInput => ({ title: "Applications", ...extra })
