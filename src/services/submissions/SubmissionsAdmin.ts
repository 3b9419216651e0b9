/**
 * What the submissions and publications routes do once access to the server's forms module is
 * granted (forms-runtime.md §2, §6): publish a form's start message, list and remove its
 * publications, list and read its submissions, and review one from the panel (the same decision as
 * the buttons: layers/submissions/ReviewDecision.ts). Layer: layers/submissions/SubmissionsAdminLive.ts.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { Success } from "../../domain/auth/Token.ts"
import type { BadRequest, Conflict, Forbidden, NotFound, RequestTimeout, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type {
  PublicationsResponse,
  PublishInput,
  ReviewInput,
  SubmissionDetail,
  SubmissionsPage,
  SubmissionsQuery
} from "../../domain/submissions/Submission.ts"
import type { ServerAccess } from "../platform/Directory.ts"

type Upstream = RequestTimeout | ServiceUnavailable
/** A platform refusal as the API answers it (ChatPlatform.rejectedToApiError). */
type PlatformRefusal = NotFound | Forbidden | Unauthorized | Upstream

export class SubmissionsAdmin extends Context.Service<SubmissionsAdmin, {
  readonly publish: (access: ServerAccess, formId: number, input: PublishInput) => Effect.Effect<{ readonly channel_id: string; readonly message_id: string }, BadRequest | PlatformRefusal>
  readonly publications: (access: ServerAccess, formId: number) => Effect.Effect<PublicationsResponse, NotFound | ServiceUnavailable>
  readonly unpublish: (access: ServerAccess, formId: number, messageId: string) => Effect.Effect<Success, PlatformRefusal>
  readonly list: (access: ServerAccess, formId: number, query: SubmissionsQuery) => Effect.Effect<SubmissionsPage, BadRequest | NotFound | ServiceUnavailable>
  readonly get: (access: ServerAccess, formId: number, submissionId: string) => Effect.Effect<SubmissionDetail, NotFound | ServiceUnavailable>
  readonly review: (access: ServerAccess, formId: number, submissionId: string, input: ReviewInput) => Effect.Effect<SubmissionDetail, BadRequest | NotFound | Conflict | ServiceUnavailable>
}>()("gateway/SubmissionsAdmin") {}
