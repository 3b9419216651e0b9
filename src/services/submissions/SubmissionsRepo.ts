/**
 * Drafts and submissions of forms (forms-runtime.md §3–§4): the storage the interactions and the
 * review jobs use, and what the submissions routes (§6) read. Answers are personal data: the layer
 * keeps them encrypted with the token keyring. Layer: layers/submissions/SubmissionsRepoSql.ts.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { StoredForm } from "../../domain/forms/Form.ts"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FormScope } from "../forms/FormsRepo.ts"
import type { AuditEntryInput } from "../audit/AuditLog.ts"

export type Answers = Readonly<Record<string, string>>

export interface Draft {
  readonly id: string
  readonly workflowId: number
  readonly userId: string
  /** The form as it was when the member started. */
  readonly snapshot: StoredForm
  readonly answers: Answers
  /** The next page to fill (0-based). */
  readonly page: number
  readonly expiresAt: Date
}

/**
 * What an interaction's first statement answers when its id was recorded before: nothing was read
 * for it and nothing is to be done (a replay changes nothing).
 */
export const REPLAYED = "replayed"
export type Replayed = typeof REPLAYED

/** A form as a draft's page sees it: there and live, there but closed, or gone (deleted, or not this server's). */
export type FormState = "live" | "closed" | "gone"

/** A draft as a Continue / Fix button or a page's submit opens it (`openDraft`). */
export interface OpenedDraft {
  readonly draft: Draft | undefined
  /** The state of the draft's form in the interaction's server (its snapshot is what is filled). */
  readonly form: FormState
}

/** What a form's start needs (`openForm`): the form now, a pending submission of the member, their draft. */
export interface OpenedForm {
  /** The form in the interaction's server; undefined when there is none. */
  readonly form: StoredForm | undefined
  readonly pending: boolean
  readonly draft: Draft | undefined
}

export interface LiveForm {
  readonly workflowId: number
  readonly title: string
}

export type SubmissionStatus = "pending" | "accepted" | "denied"
export type Priority = "low" | "medium" | "high"
export type EffectKind = "review_message" | "dm" | "summary" | "card"
export type EffectState = "pending" | "done" | "failed"
/** How an effect ended (or is still pending): its state, why, and the message it made. */
export interface EffectOutcome {
  readonly state: EffectState
  readonly reason: string | null
  readonly messageId: string | null
}

export interface SubmissionEffect {
  readonly kind: EffectKind
  readonly target: string
  readonly state: EffectState
  readonly reason: string | null
  readonly channel_id: string | null
  readonly message_id: string | null
}

export interface Submission {
  readonly id: string
  readonly workflowId: number
  readonly botId: string
  readonly serverId: string
  readonly userId: string
  readonly userName: string
  readonly userAvatar: string | null
  readonly snapshot: StoredForm
  readonly answers: Answers
  readonly status: SubmissionStatus
  readonly priority: Priority | null
  readonly reason: string | null
  readonly reviewerId: string | null
  readonly reviewerName: string | null
  readonly reviewedAt: Date | null
  readonly dm: "sent" | "closed" | null
  readonly createdAt: Date
  readonly effects: ReadonlyArray<SubmissionEffect>
  /** The members' votes on its public summary (forms-runtime.md §5). */
  readonly votes: { readonly up: number; readonly down: number }
  /** The task-board card made for it. */
  readonly cardUrl: string | null
}

export interface NewSubmission {
  readonly draft: Draft
  readonly botId: string
  readonly serverId: string
  readonly userName: string
  readonly userAvatar: string | null
  readonly answers: Answers
}

export interface Review {
  readonly decision: "pass" | "drop"
  readonly priority: Priority | null
  readonly reason: string | null
  readonly reviewerId: string
  readonly reviewerName: string
}

/** The review's outcome: it decided, or another review had (who, when). */
export type ReviewOutcome =
  | { readonly _tag: "Decided"; readonly submission: Submission }
  | { readonly _tag: "AlreadyReviewed"; readonly reviewerName: string }
  | { readonly _tag: "NotFound" }

export class SubmissionsRepo extends Context.Service<SubmissionsRepo, {
  readonly draft: (id: string) => Effect.Effect<Draft | undefined, ServiceUnavailable>
  /**
   * The interactions' reads, each one statement that also records the interaction id (REPLAYED when
   * it was recorded before; then nothing is to be done): the draft `draftId` with its form's state
   * in `scope`; a form's start; the server's live forms for `/submit`.
   */
  readonly openDraft: (interactionId: string, draftId: string, scope: FormScope) => Effect.Effect<OpenedDraft | Replayed, ServiceUnavailable>
  readonly openForm: (interactionId: string, scope: FormScope, workflowId: number, userId: string) => Effect.Effect<OpenedForm | Replayed, ServiceUnavailable>
  readonly openList: (interactionId: string, scope: FormScope) => Effect.Effect<ReadonlyArray<LiveForm> | Replayed, ServiceUnavailable>
  /** A new draft (replacing an expired one of the same member and form), in one statement. */
  readonly startDraft: (draft: Draft) => Effect.Effect<Draft, ServiceUnavailable>
  readonly saveDraft: (id: string, answers: Answers, page: number, expiresAt: Date) => Effect.Effect<void, ServiceUnavailable>
  readonly removeDraft: (id: string) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Stores the submission, ends the draft, records its pending review message and writes its audit
   * entry (`audit` of the new id), all in one durable statement: the id, or undefined when the
   * member already has a pending submission of the form (then nothing is written). The caller
   * queues the review job after it; `unqueuedReviews` finds the ones a dead process never queued.
   */
  readonly submit: (submission: NewSubmission, audit: (id: string) => AuditEntryInput) => Effect.Effect<string | undefined, ServiceUnavailable>
  /**
   * Submissions whose review message has been pending for over `olderThanSeconds`: at most `limit`,
   * by id, after the id `after` (a page; "0" for the first).
   */
  readonly unqueuedReviews: (olderThanSeconds: number, limit: number, after: string) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>
  readonly get: (id: string) => Effect.Effect<Submission | undefined, ServiceUnavailable>
  readonly list: (workflowId: number, options: { readonly status?: SubmissionStatus; readonly offset: number; readonly limit: number }) => Effect.Effect<{ readonly total: number; readonly submissions: ReadonlyArray<Submission> }, ServiceUnavailable>
  /**
   * Exactly one review decides (a conditional UPDATE); `within` runs in its transaction (the DM's
   * effect and job, the audit entry).
   */
  readonly review: <E, R>(id: string, review: Review, within: (s: Submission) => Effect.Effect<void, E, R>) => Effect.Effect<ReviewOutcome, E | ServiceUnavailable, R>
  /** Records an effect as pending (no-op when it exists). */
  readonly addEffect: (id: string, kind: EffectKind, target: string, channelId: string | null) => Effect.Effect<void, ServiceUnavailable>
  readonly effect: (id: string, kind: EffectKind, target: string) => Effect.Effect<SubmissionEffect | undefined, ServiceUnavailable>
  readonly settleEffect: (id: string, kind: EffectKind, target: string, outcome: EffectOutcome) => Effect.Effect<void, ServiceUnavailable>
  /**
   * The DM's outcome: the effect settled and, when the platform answered, the submission's `dm`
   * (sent, or the member's DMs closed), in one transaction: a reader never sees one without the
   * other, and a worker that dies between them does not leave a sent DM whose effect is pending
   * (its retry would send it again).
   */
  readonly settleDm: (id: string, dm: "sent" | "closed" | undefined, outcome: EffectOutcome) => Effect.Effect<void, ServiceUnavailable>
}>()("gateway/SubmissionsRepo") {}
