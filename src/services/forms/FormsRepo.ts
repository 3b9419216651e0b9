/**
 * Storage of forms and their steps. Every query is scoped to one bot and server, so a form of
 * another server is simply not found. `transaction` lets the Forms service put a write and its
 * audit entry in one transaction (the SQL AuditLog joins the ambient one). A repository that
 * `writesAuditOf` the AuditLog writes the entry itself, in the write's own statement
 * (FormsRepoSql with AuditLogSql on one database: one round trip per write, issue #16).
 * Layers: FormsRepoSql (src/layers/forms/FormsRepoSql.ts), FormsRepoMemory (test/layers).
 */
import { Context, Schema } from "effect"
import type { Effect, Option } from "effect"
import type { EventType } from "../../domain/audit/AuditLog.ts"
import type { Actor, AuditLog } from "../audit/AuditLog.ts"
import type { BadRequest, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FormSummary, Step, StoredForm } from "../../domain/forms/Form.ts"

export interface FormScope {
  readonly botId: string
  readonly serverId: string
}

/** A step as written: its `step_id` is its 1-based position, assigned by the repository. */
export type StepData = Omit<Step, "step_id">

/** A whole form as written (PATCH replaces everything). */
export interface FormData extends Omit<StoredForm, "workflow_id" | "timestamp_created" | "steps"> {
  readonly steps: ReadonlyArray<StepData>
}

/** The audit entry a read or write stores with it (module `forms`, the form's id, `formEventString`). */
export interface FormAudit {
  readonly actor: Actor
  readonly eventType: EventType
}

export const FORM_VERBS: Record<EventType, string> = { GET: "Viewed", PUSH: "Created", PATCH: "Updated", DELETE: "Deleted" }

/** The text of a form's audit entry, of the form as stored (FormsRepoSql builds the same text in SQL). */
export const formEventString = (eventType: EventType, form: { readonly title: string; readonly workflow_id: number }) =>
  `${FORM_VERBS[eventType]} form ${JSON.stringify(form.title)} (#${form.workflow_id})`

/** A create refused because the scope already holds `limit` forms (counted with the insert, atomically). */
export class FormsLimitReached extends Schema.TaggedError<FormsLimitReached>()("FormsLimitReached", {
  limit: Schema.Number
}) {}

export interface ListSince {
  readonly version: string | undefined
  readonly forms: ReadonlyArray<FormSummary> | undefined
}

export class FormsRepo extends Context.Service<FormsRepo, {
  readonly list: (scope: FormScope) => Effect.Effect<ReadonlyArray<FormSummary>, ServiceUnavailable>
  /**
   * The scope's data version (changed by every write that changes its list) with its list, read
   * together; `forms` is absent when the version is still `known` (a previous answer's). `version`
   * absent: the storage has none for the scope now (nothing to compare a later read with). One
   * statement. Absent on a storage without versions (the list is then read every time).
   */
  readonly listSince?: (scope: FormScope, known: string | undefined) => Effect.Effect<ListSince, ServiceUnavailable>
  /**
   * Whether this repository writes `log`'s entries itself, in the statement of the read or write
   * they describe (FormsRepoSql: when `log` keeps its entries on the same database client, the
   * AuditStore token of AuditStoreToken.ts); absent or false, it does not (`audit` is ignored).
   */
  readonly writesAuditOf?: (log: AuditLog["Service"]) => boolean
  /** With `audit` (see `writesAuditOf`), a found form's read is recorded with it. */
  readonly find: (scope: FormScope, id: number, audit?: FormAudit) => Effect.Effect<Option.Option<StoredForm>, ServiceUnavailable>
  /**
   * A string the storage cannot keep (U+0000) is a BadRequest at its path in `data`. With `limit`,
   * a scope that already holds that many forms gets FormsLimitReached: the count and the insert
   * are serialised per scope, so concurrent creates never pass the limit together.
   */
  readonly create: (
    scope: FormScope,
    data: FormData,
    limit?: number,
    audit?: FormAudit
  ) => Effect.Effect<StoredForm, FormsLimitReached | BadRequest | ServiceUnavailable>
  /** Locks the form, replaces it and all its steps; `None` when it is not a form of the scope. */
  readonly update: (
    scope: FormScope,
    id: number,
    data: FormData,
    audit?: FormAudit
  ) => Effect.Effect<Option.Option<StoredForm>, BadRequest | ServiceUnavailable>
  /** The removed form, or `None` when it is not a form of the scope. */
  readonly remove: (scope: FormScope, id: number, audit?: FormAudit) => Effect.Effect<Option.Option<StoredForm>, ServiceUnavailable>
  /** Runs `self` in one transaction: everything it writes commits together or not at all. */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
}>()("gateway/FormsRepo") {}
