/**
 * The forms module: what the forms routes do once access to the server is granted. Each write's
 * body is checked by every rule at once (FormValidation: one 400 lists every problem), then stored
 * with its audit entry atomically: in the write's own statement when the repository keeps the audit
 * log too (FormsRepo.writesAuditOf), else in one transaction; single-form reads are audited too
 * (decisions.md "Audit logs"). A server holds at most `maxFormsPerServer` forms
 * (FORMS_MAX_PER_SERVER, default 50), counted atomically at insert by the repository.
 * The list is kept per instance with the scope's data version (FormsRepo.listSince) and served
 * again only when the request's own read of the version finds it unchanged: a write through any
 * instance is in the next list read anywhere (issue #16; test/forms/FormsCache.test.ts).
 */
import { Context, Deferred, Effect, Layer, Option, Result } from "effect"
import { BadRequest, NotFound } from "../../domain/infra/Errors.ts"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { EventType } from "../../domain/audit/AuditLog.ts"
import { BOARD_DISABLED, BOARD_NO_TEAM, TASKBOARD_OPTIONS, templateDefaults } from "../../domain/forms/Form.ts"
import type { Board, Form, FormSummary, StoredForm } from "../../domain/forms/Form.ts"
import { isStorableFormId } from "../../domain/infra/Ids.ts"
import type { Success } from "../../domain/auth/Token.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import type { ServerAccess } from "../platform/Directory.ts"
import { checkFormBody } from "./FormValidation.ts"
import { formEventString, FormsRepo } from "./FormsRepo.ts"
import type { FormAudit, FormScope } from "./FormsRepo.ts"
import { toFormData } from "./FormDefaults.ts"
import { TaskBoard } from "../taskboard/TaskBoard.ts"

type Upstream = RequestTimeout | ServiceUnavailable

type ListValue = { readonly forms: ReadonlyArray<FormSummary> }
type ListSinceFn = NonNullable<FormsRepo["Service"]["listSince"]>

/** Scopes whose last list an instance keeps (services/forms/Forms.ts `list`): at most ~50 forms each. */
export const LIST_CACHE_ENTRIES = 5_000

/** What the forms module needs to know of the deployment (provided by src/layers/config/). */
export class FormsSettings extends Context.Service<FormsSettings, {
  /** Forms per server (decisions.md "Forms": 50, configurable). */
  readonly maxFormsPerServer: number
}>()("gateway/FormsSettings") {
  static readonly defaults = { maxFormsPerServer: 50 }
  static readonly layerDefaults = Layer.succeed(FormsSettings, FormsSettings.defaults)
}

export class Forms extends Context.Service<Forms, {
  readonly taskboardOptions: Effect.Effect<{ readonly options: ReadonlyArray<string> }>
  readonly taskboardBoards: (access: ServerAccess) => Effect.Effect<{ readonly taskboard_boards: ReadonlyArray<Board> }, Upstream>
  readonly list: (access: ServerAccess) => Effect.Effect<{ readonly forms: ReadonlyArray<FormSummary> }, ServiceUnavailable>
  readonly template: (access: ServerAccess) => Effect.Effect<Form, Upstream>
  readonly get: (access: ServerAccess, formId: number) => Effect.Effect<Form, NotFound | Upstream>
  /** `body`: the request's JSON as sent; every rule runs on it (FormValidation.checkFormBody). */
  readonly create: (access: ServerAccess, body: unknown) => Effect.Effect<Form, BadRequest | Upstream>
  readonly update: (access: ServerAccess, formId: number, body: unknown) => Effect.Effect<Form, BadRequest | NotFound | Upstream>
  readonly remove: (access: ServerAccess, formId: number) => Effect.Effect<Success, NotFound | ServiceUnavailable>
}>()("gateway/Forms") {
  /** Requires FormsRepo, AuditLog, TaskBoard and FormsSettings. */
  static readonly layer = Layer.effect(Forms, Effect.gen(function*() {
    const repo = yield* FormsRepo
    const audit = yield* AuditLog
    const taskBoard = yield* TaskBoard
    const { maxFormsPerServer } = yield* FormsSettings

    /** The boards listing of the contract: `0` then the real boards, or only `-1` without a paired team. */
    const boardsOf = (access: ServerAccess) =>
      Effect.map(taskBoard.boards(access.serverId), (real) => ({
        real,
        listing: real === undefined ? [BOARD_NO_TEAM] : [BOARD_DISABLED, ...real]
      }))

    const respond = (stored: StoredForm, listing: ReadonlyArray<Board>): Form => ({
      ...stored,
      // Rows written before colours were lower-cased are answered lower case too.
      color_hex: stored.color_hex.toLowerCase(),
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
        eventString: formEventString(eventType, form)
      })

    // The repository writes the entry itself, in the statement of the write, when it can write this
    // audit log's entries (SQL on one client): one round trip per request. Else a transaction joins them.
    const fused = repo.writesAuditOf?.(audit) ?? false
    const entry = (access: ServerAccess, eventType: EventType): FormAudit => ({ actor: access.actor, eventType })

    const notFound = (formId: number) =>
      NotFound.of(isStorableFormId(formId) ? `Form ${formId} does not exist on this server.` : "There is no such form on this server.")

    /** A canonical id beyond what the store holds names nothing: 404 without a query. */
    const found = (scope: FormScope, formId: number) =>
      isStorableFormId(formId) ? repo.find(scope, formId) : Effect.succeed(Option.none<StoredForm>())

    const scopeOf = (access: ServerAccess) => ({ botId: access.botId, serverId: access.serverId })

    const checked = (access: ServerAccess, body: unknown, real: ReadonlyArray<Board> | undefined, formId?: number) => {
      const result = checkFormBody(body, {
        channels: access.channels,
        roles: access.roles,
        boards: real,
        ...(formId === undefined ? {} : { formId })
      })
      return Result.isFailure(result)
        ? Effect.fail(BadRequest.many(result.failure))
        : Effect.succeed(toFormData(result.success, real))
    }

    const tooMany = () =>
      BadRequest.of(
        `This server already has ${maxFormsPerServer} forms, the most a server may have; delete one before creating another.`,
        { limit: maxFormsPerServer }
      )

    /**
     * A refused create on a server already at the limit names the limit too (decisions.md: every
     * problem in one 400). Only a refused body pays the read; the limit itself is enforced by the
     * create (FormsRepo.create), whatever this read saw.
     */
    const refusedOnFullServer = (access: ServerAccess, refused: BadRequest) =>
      Effect.flatMap(repo.list(scopeOf(access)), (forms) =>
        Effect.fail(forms.length >= maxFormsPerServer ? BadRequest.many([...refused.problems, ...tooMany().problems]) : refused))

    const listing = (forms: ReadonlyArray<FormSummary>): ListValue => ({
      forms: forms.map((f) => ({ ...f, color_hex: f.color_hex.toLowerCase() }))
    })

    /** One read of the scope's list: its last list again (the same object) while its version is unchanged. */
    const readList = (listSince: ListSinceFn, scope: FormScope, key: string) =>
      Effect.suspend(() => {
        const known = lists.get(key)
        return Effect.map(listSince(scope, known?.version), (read) => {
          if (read.forms === undefined && known !== undefined && read.version === known.version) return known.value
          const value = listing(read.forms ?? [])
          remember(key, read.version, value)
          return value
        })
      })

    // Reads of one scope share the storage's answer, and stay fresh: a request that arrives while a
    // read is in flight (sent before it came, so it might miss a write it must see) waits for the
    // next one, which starts when that read ends, for every request that arrived meanwhile.
    const flights = new Map<string, { next: Deferred.Deferred<ListValue, ServiceUnavailable> | undefined }>()
    const sharedCheck = (listSince: ListSinceFn, scope: FormScope): Effect.Effect<ListValue, ServiceUnavailable> =>
      Effect.suspend(() => {
        const key = `${scope.botId}/${scope.serverId}`
        const flight = flights.get(key)
        if (flight === undefined) {
          flights.set(key, { next: undefined })
          return Effect.onExit(readList(listSince, scope, key), () => afterRead(listSince, scope, key))
        }
        if (flight.next === undefined) flight.next = Deferred.makeUnsafe()
        return Deferred.await(flight.next)
      })
    // The next read, detached: a waiter that goes away (its client closed) cannot leave the others waiting.
    const afterRead = (listSince: ListSinceFn, scope: FormScope, key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const flight = flights.get(key)
        const next = flight?.next
        if (flight === undefined || next === undefined) {
          flights.delete(key)
          return Effect.void
        }
        flight.next = undefined
        return Effect.asVoid(Effect.forkDetach(
          // onExit: the waiters get the read's end whatever it is (a failure, an interruption at shutdown).
          Effect.onExit(readList(listSince, scope, key), (exit) => Effect.andThen(Deferred.done(next, exit), afterRead(listSince, scope, key)))
        ))
      })

    // Per instance: scope → its last list and the version it was read at (a bounded map, oldest out first).
    const lists = new Map<string, { readonly version: string; readonly value: ListValue }>()
    const remember = (key: string, version: string | undefined, value: ListValue) => {
      lists.delete(key)
      if (version === undefined) return
      if (lists.size >= LIST_CACHE_ENTRIES) lists.delete(lists.keys().next().value!)
      lists.set(key, { version, value })
    }

    return Forms.of({
      taskboardOptions: Effect.succeed({ options: [...TASKBOARD_OPTIONS] }),
      taskboardBoards: (access) => Effect.map(boardsOf(access), ({ listing }) => ({ taskboard_boards: listing })),
      list: (access) => {
        const listSince = repo.listSince
        if (listSince === undefined) return Effect.map(repo.list(scopeOf(access)), listing)
        return sharedCheck(listSince, scopeOf(access))
      },
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
        const stored = fused
          ? yield* Effect.flatMap(
            isStorableFormId(formId) ? repo.find(scopeOf(access), formId, entry(access, "GET")) : Effect.succeed(Option.none<StoredForm>()),
            (form) => Option.isNone(form) ? Effect.fail(notFound(formId)) : Effect.succeed(form.value)
          )
          : yield* repo.transaction(Effect.gen(function*() {
            const form = yield* found(scopeOf(access), formId)
            if (Option.isNone(form)) return yield* notFound(formId)
            yield* record(access, "GET", form.value)
            return form.value
          }))
        return respond(stored, listing)
      }),
      create: Effect.fn("Forms.create")(function*(access, body) {
        const { listing, real } = yield* boardsOf(access)
        const data = yield* Effect.catch(checked(access, body, real), (refused) => refusedOnFullServer(access, refused))
        const create = (audited?: FormAudit) =>
          repo.create(scopeOf(access), data, maxFormsPerServer, audited).pipe(
            Effect.catchTag("FormsLimitReached", () => Effect.fail(tooMany()))
          )
        const stored = fused
          ? yield* create(entry(access, "PUSH"))
          : yield* repo.transaction(Effect.gen(function*() {
            const created = yield* create()
            yield* record(access, "PUSH", created)
            return created
          }))
        return respond(stored, listing)
      }),
      update: Effect.fn("Forms.update")(function*(access, formId, body) {
        if (fused) {
          if (!isStorableFormId(formId)) return yield* notFound(formId)
          // 404 before 400 (or an upstream failure): only a request that fails asks whether the form is there.
          const absent = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | NotFound | ServiceUnavailable> =>
            Effect.catch(self, (error) =>
              Effect.flatMap(repo.find(scopeOf(access), formId), (form) =>
                Effect.fail(Option.isNone(form) ? notFound(formId) : error)))
          const { listing, real } = yield* absent(boardsOf(access))
          const data = yield* absent(checked(access, body, real, formId))
          const updated = yield* repo.update(scopeOf(access), formId, data, entry(access, "PATCH"))
          if (Option.isNone(updated)) return yield* notFound(formId)
          return respond(updated.value, listing)
        }
        // 404 before 400: a form of another server is never there, whatever the body says.
        if (Option.isNone(yield* found(scopeOf(access), formId))) return yield* notFound(formId)
        const { listing, real } = yield* boardsOf(access)
        const data = yield* checked(access, body, real, formId)
        const stored = yield* repo.transaction(Effect.gen(function*() {
          const updated = yield* repo.update(scopeOf(access), formId, data)
          if (Option.isNone(updated)) return yield* notFound(formId)
          yield* record(access, "PATCH", updated.value)
          return updated.value
        }))
        return respond(stored, listing)
      }),
      remove: Effect.fn("Forms.remove")(function*(access, formId) {
        if (!isStorableFormId(formId)) return yield* notFound(formId)
        if (fused) {
          const removed = yield* repo.remove(scopeOf(access), formId, entry(access, "DELETE"))
          if (Option.isNone(removed)) return yield* notFound(formId)
          return { success: true }
        }
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
