/**
 * SubmissionsRepo on SQL (migration 0017). Answers and reasons are encrypted with the Cipher, bound
 * to their row (aad `draft:<id>`, `submission:<id>`, `submission:<id>:reason`); the form snapshot
 * is stored as it was (the form's own fields, not personal data). An interaction's reads are one
 * statement each with its id's record (`open*`, SeenInteractionsSql.ts `withSeen`): every statement
 * waits for a connection of the pool, so a page is as few of them as its guarantees allow.
 */
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { StoredForm } from "../../domain/forms/Form.ts"
import { Cipher } from "../../services/infra/Cipher.ts"
import { REPLAYED, SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { Answers, Draft, EffectKind, EffectOutcome, FormState, LiveForm, OpenedDraft, OpenedForm, Replayed, Submission, SubmissionEffect } from "../../services/submissions/SubmissionsRepo.ts"
import { entryColumns, entryValues } from "../audit/AuditLogSql.ts"
import { toStored } from "../forms/FormRows.ts"
import type { FormRow } from "../forms/FormRows.ts"
import { interactionsSql } from "../infra/InteractionsSql.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"
import { asyncCommit } from "./AsyncCommit.ts"
import { firstSeenColumn, withSeen } from "./SeenInteractionsSql.ts"

const db = sqlFailure("The submissions storage")

interface DraftRow {
  readonly id: string
  readonly workflow_id: bigint | number | string
  readonly user_id: string
  readonly snapshot: StoredForm
  readonly answers_enc: string
  readonly page: number
  readonly expires_at: Date
}

/** A draft's columns beside others (LEFT JOINed: all null when there is none). */
type MaybeDraftRow = { readonly [K in keyof DraftRow]: DraftRow[K] | null }

/** `openForm`'s row: the draft's columns, the form's (`forms_read`, its id as form_id), the pending check. */
type OpenFormRow = MaybeDraftRow & Omit<FormRow, "workflow_id"> & { readonly form_id: FormRow["workflow_id"]; readonly pending: boolean }

interface SubmissionRow {
  readonly id: bigint | number | string
  readonly workflow_id: bigint | number | string
  readonly bot_id: string
  readonly server_id: string
  readonly user_id: string
  readonly user_name: string
  readonly user_avatar: string | null
  readonly snapshot: StoredForm
  readonly answers_enc: string
  readonly status: Submission["status"]
  readonly priority: Submission["priority"]
  readonly reason_enc: string | null
  readonly reviewer_id: string | null
  readonly reviewer_name: string | null
  readonly reviewed_at: Date | null
  readonly dm: Submission["dm"]
  readonly created_at: Date
  readonly card_url?: string | null
  readonly votes_up?: number
  readonly votes_down?: number
}

const parseAnswers = (json: string): Answers => {
  const value: unknown = JSON.parse(json)
  return typeof value === "object" && value !== null ? value as Answers : {}
}

export const SubmissionsRepoSql = Layer.effect(SubmissionsRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A member's pages (`open*`, drafts, submit): the interactions' own pipelined pool on PostgreSQL.
  const isql = yield* interactionsSql
  const cipher = yield* Cipher
  const seal = (value: string, aad: string) => cipher.encrypt(Redacted.make(value), aad)
  // A ciphertext that does not open (a key removed from the keyring) is a defect: logged, 500.
  const open = (value: string, aad: string) => Effect.map(Effect.orDie(cipher.decrypt(value, aad)), Redacted.value)

  const draftCols = sql`d.id, d.workflow_id, d.user_id, d.snapshot, d.answers_enc, d.page, d.expires_at`
  const maybeDraft = (r: MaybeDraftRow) => (r.id === null ? Effect.succeed(undefined) : toDraft(r as DraftRow))

  const toDraft = (r: DraftRow) =>
    Effect.map(open(r.answers_enc, `draft:${r.id}`), (answers): Draft => ({
      id: r.id,
      workflowId: Number(r.workflow_id),
      userId: r.user_id,
      snapshot: r.snapshot,
      answers: parseAnswers(answers),
      page: r.page,
      expiresAt: r.expires_at
    }))

  const effectsOf = (id: string) =>
    sql<SubmissionEffect>`SELECT kind, target, state, reason, channel_id, message_id FROM submission_effects
      WHERE submission_id = ${id} ORDER BY kind, target`

  const toSubmission = (r: SubmissionRow, effects: ReadonlyArray<SubmissionEffect>) =>
    Effect.gen(function*() {
      const id = String(r.id)
      const answers = parseAnswers(yield* open(r.answers_enc, `submission:${id}`))
      const reason = r.reason_enc === null ? null : yield* open(r.reason_enc, `submission:${id}:reason`)
      return {
        id,
        workflowId: Number(r.workflow_id),
        botId: r.bot_id,
        serverId: r.server_id,
        userId: r.user_id,
        userName: r.user_name,
        userAvatar: r.user_avatar,
        snapshot: r.snapshot,
        answers,
        status: r.status,
        priority: r.priority,
        reason,
        reviewerId: r.reviewer_id,
        reviewerName: r.reviewer_name,
        reviewedAt: r.reviewed_at,
        dm: r.dm,
        createdAt: r.created_at,
        effects,
        votes: { up: r.votes_up ?? 0, down: r.votes_down ?? 0 },
        cardUrl: r.card_url ?? null
      } satisfies Submission
    })

  const get = (id: string) =>
    Effect.gen(function*() {
      if (!/^[0-9]{1,18}$/.test(id)) return undefined
      // The votes counted (migration 0019): exact whatever clicks run at once.
      const rows = yield* sql<SubmissionRow>`SELECT s.*,
          (SELECT count(*)::int FROM submission_votes v WHERE v.submission_id = s.id AND v.direction = 'up') AS votes_up,
          (SELECT count(*)::int FROM submission_votes v WHERE v.submission_id = s.id AND v.direction = 'down') AS votes_down
        FROM form_submissions s WHERE s.id = ${id}`
      if (rows[0] === undefined) return undefined
      return yield* toSubmission(rows[0], yield* effectsOf(id))
    })

  const settle = (id: string, kind: EffectKind, target: string, o: EffectOutcome) =>
    sql`UPDATE submission_effects SET state = ${o.state}, reason = ${o.reason}, message_id = COALESCE(${o.messageId}, message_id), updated_at = now()
      WHERE submission_id = ${id} AND kind = ${kind} AND target = ${target}`.pipe(Effect.asVoid)

  return SubmissionsRepo.of({
    draft: (id) =>
      sql<DraftRow>`SELECT * FROM form_drafts WHERE id = ${id}`.pipe(
        Effect.flatMap((rows) => (rows[0] === undefined ? Effect.succeed(undefined) : toDraft(rows[0]))),
        db
      ),
    openDraft: (interactionId, draftId, scope) =>
      withSeen<MaybeDraftRow & { readonly form_state: FormState }>(isql, interactionId, isql`SELECT ${firstSeenColumn(isql)}, ${draftCols},
          CASE WHEN f.workflow_id IS NULL THEN 'gone' WHEN f.flags @> '{"workflow_live": true}' THEN 'live' ELSE 'closed' END AS form_state
        FROM (SELECT 1) AS one
        LEFT JOIN form_drafts d ON d.id = ${draftId}
        LEFT JOIN forms f ON f.workflow_id = d.workflow_id AND f.bot_id = ${scope.botId} AND f.server_id = ${scope.serverId}`).pipe(
        Effect.flatMap((rows): Effect.Effect<OpenedDraft | Replayed> => {
          const r = rows[0]!
          if (r.first_seen !== 1) return Effect.succeed(REPLAYED)
          return Effect.map(maybeDraft(r), (draft): OpenedDraft => ({ draft, form: r.form_state }))
        }),
        db
      ),
    openForm: (interactionId, scope, workflowId, userId) =>
      // forms_read (migration 0010) without an audit entry: the form as FormsRepo.find answers it.
      withSeen<OpenFormRow>(isql, interactionId, isql`SELECT ${firstSeenColumn(isql)}, ${draftCols},
          f.workflow_id AS form_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions, f.public_mentions,
          f.flags, f.taskboard_board, f.created_at, f.steps,
          EXISTS (SELECT 1 FROM form_submissions s
            WHERE s.workflow_id = ${workflowId} AND s.user_id = ${userId} AND s.status = 'pending') AS pending
        FROM (SELECT 1) AS one
        LEFT JOIN forms_read(${workflowId}::int8, ${scope.botId}, ${scope.serverId}, NULL, NULL, NULL, NULL, NULL) f ON true
        LEFT JOIN form_drafts d ON d.workflow_id = ${workflowId} AND d.user_id = ${userId}`).pipe(
        Effect.flatMap((rows): Effect.Effect<OpenedForm | Replayed> => {
          const r = rows[0]!
          if (r.first_seen !== 1) return Effect.succeed(REPLAYED)
          const form = r.form_id === null ? undefined : toStored({ ...r, workflow_id: r.form_id }, r.steps)
          return Effect.map(maybeDraft(r), (draft): OpenedForm => ({ form, pending: r.pending, draft }))
        }),
        db
      ),
    openList: (interactionId, scope) =>
      withSeen<{ readonly workflow_id: bigint | number | string | null; readonly title: string | null }>(isql, interactionId, isql`SELECT ${firstSeenColumn(isql)}, f.workflow_id, f.title
        FROM (SELECT 1) AS one
        LEFT JOIN forms f ON f.bot_id = ${scope.botId} AND f.server_id = ${scope.serverId} AND f.flags @> '{"workflow_live": true}'
        ORDER BY f.workflow_id`).pipe(
        Effect.map((rows): ReadonlyArray<LiveForm> | Replayed => {
          if (rows[0]?.first_seen !== 1) return REPLAYED
          return rows.flatMap((r) => (r.workflow_id === null ? [] : [{ workflowId: Number(r.workflow_id), title: r.title ?? "" }]))
        }),
        db
      ),
    startDraft: (draft) =>
      Effect.gen(function*() {
        const answers = yield* seal(JSON.stringify(draft.answers), `draft:${draft.id}`)
        // One statement: the member's previous draft of the form (expired) is replaced, its id with it
        // (its buttons then find nothing). A draft lost in a crash is started again: not worth a wait
        // for the disk.
        yield* isql`INSERT INTO form_drafts (id, workflow_id, user_id, snapshot, answers_enc, page, expires_at)
          SELECT ${draft.id}, ${draft.workflowId}, ${draft.userId}, ${JSON.stringify(draft.snapshot)}::jsonb,
            ${answers}, ${draft.page}, ${draft.expiresAt} FROM ${asyncCommit(isql)}
          ON CONFLICT (workflow_id, user_id) DO UPDATE SET id = EXCLUDED.id, snapshot = EXCLUDED.snapshot,
            answers_enc = EXCLUDED.answers_enc, page = EXCLUDED.page, expires_at = EXCLUDED.expires_at, created_at = now()`
        return draft
      }).pipe(db),
    saveDraft: (id, answers, page, expiresAt) =>
      Effect.flatMap(seal(JSON.stringify(answers), `draft:${id}`), (enc) =>
        // A page lost in a crash is filled again: committed without waiting for the disk.
        isql`UPDATE form_drafts SET answers_enc = ${enc}, page = ${page}, expires_at = ${expiresAt} FROM ${asyncCommit(isql)} WHERE id = ${id}`).pipe(
          Effect.asVoid,
          db
        ),
    removeDraft: (id) => isql`DELETE FROM form_drafts WHERE id = ${id}`.pipe(Effect.asVoid, db),
    submit: (s, audit) =>
      Effect.gen(function*() {
        // The id first: the answers are sealed bound to it.
        const [head] = yield* isql<{ id: string }>`SELECT nextval('form_submissions_id_seq')::text AS id`
        const id = head!.id
        const answers = yield* seal(JSON.stringify(s.answers), `submission:${id}`)
        // One statement, committed durably on its own: the submission (none when the member has one
        // pending: the partial unique index), the draft's end, the pending review message and the
        // audit entry. The entry's trigger locks its server's month counter row until the commit,
        // which here follows the statement at once, not a round trip through a busy process later.
        const stored = yield* isql`WITH submission AS (
            INSERT INTO form_submissions (id, workflow_id, bot_id, server_id, user_id, user_name, user_avatar, snapshot, answers_enc)
            VALUES (${id}, ${s.draft.workflowId}, ${s.botId}, ${s.serverId}, ${s.draft.userId}, ${s.userName}, ${s.userAvatar},
              ${JSON.stringify(s.draft.snapshot)}::jsonb, ${answers})
            ON CONFLICT (workflow_id, user_id) WHERE status = 'pending' DO NOTHING
            RETURNING id
          ), ended AS (DELETE FROM form_drafts WHERE id = ${s.draft.id} AND EXISTS (SELECT 1 FROM submission)),
          effect AS (INSERT INTO submission_effects (submission_id, kind, channel_id)
            SELECT id, 'review_message', ${s.draft.snapshot.channel_id} FROM submission)
          INSERT INTO audit_entries ${entryColumns(isql)} SELECT ${entryValues(isql, audit(id))} FROM submission
          RETURNING 1 AS stored`
        return stored.length === 0 ? undefined : id
      }).pipe(db),
    unqueuedReviews: (olderThanSeconds, limit, after) =>
      sql<{ id: string }>`SELECT submission_id::text AS id FROM submission_effects
        WHERE state = 'pending' AND kind = 'review_message' AND submission_id > ${after}::int8
          AND updated_at < now() - make_interval(secs => ${olderThanSeconds})
        ORDER BY submission_id LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map((r) => r.id)), db),
    get: (id) => get(id).pipe(db),
    list: (workflowId, { limit, offset, status }) =>
      Effect.gen(function*() {
        const where = status === undefined
          ? sql`workflow_id = ${workflowId}`
          : sql`workflow_id = ${workflowId} AND status = ${status}`
        const [count] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM form_submissions WHERE ${where}`
        const rows = yield* sql<SubmissionRow>`SELECT * FROM form_submissions WHERE ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`
        const submissions = yield* Effect.forEach(rows, (r) => toSubmission(r, []))
        return { total: Number(count?.n ?? 0), submissions }
      }).pipe(db),
    review: (id, review, within) =>
      sql.withTransaction(Effect.gen(function*() {
        if (!/^[0-9]{1,18}$/.test(id)) return { _tag: "NotFound" } as const
        const reason = review.reason === null ? null : yield* seal(review.reason, `submission:${id}:reason`)
        const decided = yield* sql`UPDATE form_submissions SET
            status = ${review.decision === "pass" ? "accepted" : "denied"}, priority = ${review.priority},
            reason_enc = ${reason}, reviewer_id = ${review.reviewerId}, reviewer_name = ${review.reviewerName}, reviewed_at = now()
          WHERE id = ${id} AND status = 'pending' RETURNING id`
        if (decided.length === 0) {
          const [row] = yield* sql<{ reviewer_name: string | null }>`SELECT reviewer_name FROM form_submissions WHERE id = ${id}`
          return row === undefined ? { _tag: "NotFound" } as const : { _tag: "AlreadyReviewed", reviewerName: row.reviewer_name ?? "someone" } as const
        }
        const submission = (yield* get(id))!
        yield* within(submission)
        return { _tag: "Decided", submission } as const
      })).pipe(db),
    addEffect: (id, kind, target, channelId) =>
      sql`INSERT INTO submission_effects (submission_id, kind, target, channel_id) VALUES (${id}, ${kind}, ${target}, ${channelId})
        ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, db),
    effect: (id, kind, target) =>
      sql<SubmissionEffect>`SELECT kind, target, state, reason, channel_id, message_id FROM submission_effects
        WHERE submission_id = ${id} AND kind = ${kind} AND target = ${target}`.pipe(Effect.map((rows) => rows[0]), db),
    settleEffect: (id, kind, target, o) => settle(id, kind, target, o).pipe(db),
    settleDm: (id, dm, o) =>
      sql.withTransaction(Effect.gen(function*() {
        if (dm !== undefined) yield* sql`UPDATE form_submissions SET dm = ${dm} WHERE id = ${id}`
        yield* settle(id, "dm", "", o)
      })).pipe(db)
  })
}))
