/**
 * The forms module: what the forms routes do once access to the server is granted. Each write is
 * validated against the server (FormValidation), then stored with its audit entry in one
 * transaction; single-form reads are audited too (decisions.md "Audit logs").
 */
import { Context, Effect, Layer, Option } from "effect"
import { BadRequest, NotFound } from "../domain/Errors.ts"
import type { RequestTimeout, ServiceUnavailable } from "../domain/Errors.ts"
import type { EventType } from "../domain/AuditLog.ts"
import { BOARD_DISABLED, BOARD_NO_TEAM, FORM_FLAGS, TASKBOARD_OPTIONS, templateDefaults } from "../domain/Form.ts"
import type { Board, Form, FormFlag, FormInput, FormSummary, StoredForm } from "../domain/Form.ts"
import type { Success } from "../domain/Token.ts"
import { AuditLog } from "./AuditLog.ts"
import type { ServerAccess } from "./Directory.ts"
import { validateForm } from "./FormValidation.ts"
import { FormsRepo } from "./FormsRepo.ts"
import type { FormData } from "./FormsRepo.ts"
import { TaskBoard } from "./TaskBoard.ts"

type Upstream = RequestTimeout | ServiceUnavailable

/** Defaults of a written form where the body is silent (decisions.md: PATCH replaces the whole form). */
export const DEFAULT_COLOR = templateDefaults.color_hex
export const DEFAULT_CHAR_LIMIT: readonly [number, number] = [1, 2000]

export class Forms extends Context.Service<Forms, {
  readonly taskboardOptions: Effect.Effect<{ readonly options: ReadonlyArray<string> }>
  readonly taskboardBoards: (access: ServerAccess) => Effect.Effect<{ readonly taskboard_boards: ReadonlyArray<Board> }, Upstream>
  readonly list: (access: ServerAccess) => Effect.Effect<{ readonly forms: ReadonlyArray<FormSummary> }, ServiceUnavailable>
  readonly template: (access: ServerAccess) => Effect.Effect<Form, Upstream>
  readonly get: (access: ServerAccess, formId: number) => Effect.Effect<Form, NotFound | Upstream>
  readonly create: (access: ServerAccess, input: FormInput) => Effect.Effect<Form, BadRequest | Upstream>
  readonly update: (access: ServerAccess, formId: number, input: FormInput) => Effect.Effect<Form, BadRequest | NotFound | Upstream>
  readonly remove: (access: ServerAccess, formId: number) => Effect.Effect<Success, NotFound | ServiceUnavailable>
}>()("gateway/Forms") {
  /** Requires FormsRepo, AuditLog and TaskBoard. */
  static readonly layer = Layer.effect(Forms, Effect.gen(function*() {
    const repo = yield* FormsRepo
    const audit = yield* AuditLog
    const taskBoard = yield* TaskBoard

    /** The boards listing of the contract: `0` then the real boards, or only `-1` without a paired team. */
    const boardsOf = (access: ServerAccess) =>
      Effect.map(taskBoard.boards(access.serverId), (real) => ({
        real,
        listing: real === undefined ? [BOARD_NO_TEAM] : [BOARD_DISABLED, ...real]
      }))

    const respond = (stored: StoredForm, listing: ReadonlyArray<Board>): Form => ({
      ...stored,
      taskboard_options: [...TASKBOARD_OPTIONS],
      taskboard_boards: listing
    })

    const record = (access: ServerAccess, eventType: EventType, form: StoredForm) =>
      audit.append({
        botId: access.botId,
        serverId: access.serverId,
        actor: access.actor,
        module: "forms",
        itemIdentifier: form.workflow_id,
        eventType,
        eventString: `${VERBS[eventType]} form ${JSON.stringify(form.title)} (#${form.workflow_id})`
      })

    const notFound = (formId: number) => NotFound.of(`Form ${formId} does not exist on this server.`)

    const scopeOf = (access: ServerAccess) => ({ botId: access.botId, serverId: access.serverId })

    const checked = (access: ServerAccess, input: FormInput, real: ReadonlyArray<Board> | undefined, formId?: number) => {
      const problems = validateForm(input, {
        channels: access.channels,
        roles: access.roles,
        boards: real,
        ...(formId === undefined ? {} : { formId })
      })
      return problems.length > 0 ? Effect.fail(BadRequest.many(problems)) : Effect.succeed(toFormData(input, real))
    }

    return Forms.of({
      taskboardOptions: Effect.succeed({ options: [...TASKBOARD_OPTIONS] }),
      taskboardBoards: (access) => Effect.map(boardsOf(access), ({ listing }) => ({ taskboard_boards: listing })),
      list: (access) => Effect.map(repo.list(scopeOf(access)), (forms) => ({ forms })),
      template: (access) =>
        Effect.map(boardsOf(access), ({ listing }) => ({
          ...templateDefaults,
          fwd_channel_ids: [],
          role_mentions: [],
          public_mentions: [],
          steps: [],
          taskboard_options: [...TASKBOARD_OPTIONS],
          taskboard_boards: listing
        })),
      get: Effect.fn("Forms.get")(function*(access, formId) {
        const { listing } = yield* boardsOf(access)
        const stored = yield* repo.transaction(Effect.gen(function*() {
          const found = yield* repo.find(scopeOf(access), formId)
          if (Option.isNone(found)) return yield* notFound(formId)
          yield* record(access, "GET", found.value)
          return found.value
        }))
        return respond(stored, listing)
      }),
      create: Effect.fn("Forms.create")(function*(access, input) {
        const { listing, real } = yield* boardsOf(access)
        const data = yield* checked(access, input, real)
        const stored = yield* repo.transaction(Effect.gen(function*() {
          const created = yield* repo.create(scopeOf(access), data)
          yield* record(access, "PUSH", created)
          return created
        }))
        return respond(stored, listing)
      }),
      update: Effect.fn("Forms.update")(function*(access, formId, input) {
        // 404 before 400: a form of another server is never there, whatever the body says.
        if (Option.isNone(yield* repo.find(scopeOf(access), formId))) return yield* notFound(formId)
        const { listing, real } = yield* boardsOf(access)
        const data = yield* checked(access, input, real, formId)
        const stored = yield* repo.transaction(Effect.gen(function*() {
          const updated = yield* repo.update(scopeOf(access), formId, data)
          if (Option.isNone(updated)) return yield* notFound(formId)
          yield* record(access, "PATCH", updated.value)
          return updated.value
        }))
        return respond(stored, listing)
      }),
      remove: Effect.fn("Forms.remove")(function*(access, formId) {
        yield* repo.transaction(Effect.gen(function*() {
          const removed = yield* repo.remove(scopeOf(access), formId)
          if (Option.isNone(removed)) return yield* notFound(formId)
          yield* record(access, "DELETE", removed.value)
        }))
        return { success: true }
      })
    })
  }))
}

const VERBS: Record<EventType, string> = { GET: "Viewed", PUSH: "Created", PATCH: "Updated", DELETE: "Deleted" }

/** The form as stored: omitted flags false, colour `#00d084`, lists empty, `char_limit` [1, 2000]. */
export const toFormData = (input: FormInput, realBoards: ReadonlyArray<Board> | undefined): FormData => {
  const flags = Object.fromEntries(FORM_FLAGS.map((f) => [f, input[f] === true])) as Record<FormFlag, boolean>
  return {
    ...flags,
    title: input.title,
    color_hex: input.color_hex ?? DEFAULT_COLOR,
    channel_id: input.channel_id ?? null,
    fwd_channel_ids: input.fwd_channel_ids ?? [],
    role_mentions: input.role_mentions ?? [],
    public_mentions: input.public_mentions ?? [],
    // Omitted: "integration off" in the words of the server's pairing.
    taskboard_board: input.taskboard_board ?? (realBoards === undefined ? BOARD_NO_TEAM.id : BOARD_DISABLED.id),
    steps: (input.steps ?? []).map((s) => ({
      type: s.type,
      string: s.string,
      answers_validation: s.answers_validation ?? [],
      char_limit: s.char_limit ?? DEFAULT_CHAR_LIMIT,
      alias: s.alias ?? null,
      taskboard_mapping: s.taskboard_mapping ?? null
    }))
  }
}
