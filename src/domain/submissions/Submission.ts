/**
 * The submissions and publications routes' wire shapes (forms-runtime.md §2, §6): what the contract,
 * the typed client and the panel share. Exact wire names of the spec.
 */
import { Schema } from "effect"
import { Snowflake } from "../infra/Ids.ts"

/** `:submissionId` and `:messageId`: canonical positive decimals (decisions.md "Errors"), 400 naming the parameter. */
const canonical = (what: string) => {
  const message = `expected ${what}: a positive decimal integer, without sign, leading zero or other notation`
  return Schema.String.annotate({ message }).check(Schema.isPattern(/^[1-9][0-9]*$/, { message }))
}
export const SubmissionIdParam = canonical("a submission id")
export const MessageIdParam = canonical("a message id")

export const SubmissionStatus = Schema.Literals(["pending", "accepted", "denied"])
export const Priority = Schema.Literals(["low", "medium", "high"])

export const SubmissionSummary = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  user_name: Schema.String,
  status: SubmissionStatus,
  priority: Schema.NullOr(Priority),
  created_at: Schema.String,
  reviewed_at: Schema.NullOr(Schema.String),
  reviewer_name: Schema.NullOr(Schema.String)
}).annotate({ identifier: "SubmissionSummary" })
export type SubmissionSummary = typeof SubmissionSummary.Type

export const SubmissionsPage = Schema.Struct({
  submissions: Schema.Array(SubmissionSummary),
  page: Schema.Int,
  page_size: Schema.Int,
  page_max: Schema.Int
}).annotate({ identifier: "SubmissionsPage" })
export type SubmissionsPage = typeof SubmissionsPage.Type

/** The list's query: strings here, checked by the service with the audit log's rules (400 naming the parameter). */
export const SubmissionsQuery = Schema.Struct({
  status: Schema.optionalKey(Schema.String),
  page: Schema.optionalKey(Schema.String),
  page_size: Schema.optionalKey(Schema.String)
})
export type SubmissionsQuery = typeof SubmissionsQuery.Type

export const SubmissionAnswer = Schema.Struct({
  step_id: Schema.Int,
  question: Schema.String,
  alias: Schema.NullOr(Schema.String),
  answer: Schema.String,
  private: Schema.Boolean
}).annotate({ identifier: "SubmissionAnswer" })

export const SubmissionEffect = Schema.Struct({
  kind: Schema.Literals(["review_message", "dm", "summary", "card"]),
  state: Schema.Literals(["pending", "done", "failed"]),
  reason: Schema.NullOr(Schema.String),
  channel_id: Schema.NullOr(Schema.String),
  message_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "SubmissionEffect" })

export const SubmissionDetail = Schema.Struct({
  ...SubmissionSummary.fields,
  answers: Schema.Array(SubmissionAnswer),
  reason: Schema.NullOr(Schema.String),
  votes: Schema.Struct({ up: Schema.Int, down: Schema.Int }),
  card_url: Schema.NullOr(Schema.String),
  effects: Schema.Array(SubmissionEffect)
}).annotate({ identifier: "SubmissionDetail" })
export type SubmissionDetail = typeof SubmissionDetail.Type

/** The review's body; the cross-field rules (priority only with pass, reason only with drop) are the service's. */
export const ReviewInput = Schema.Struct({
  decision: Schema.Literals(["pass", "drop"]),
  priority: Schema.optionalKey(Priority),
  reason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ReviewInput" })
export type ReviewInput = typeof ReviewInput.Type

export const PublishInput = Schema.Struct({ channel_id: Snowflake }).annotate({ identifier: "PublishInput" })
export type PublishInput = typeof PublishInput.Type

export const Publication = Schema.Struct({
  channel_id: Schema.String,
  message_id: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "Publication" })
export type Publication = typeof Publication.Type

export const Published = Schema.Struct({ channel_id: Schema.String, message_id: Schema.String }).annotate({ identifier: "Published" })

export const PublicationsResponse = Schema.Struct({ publications: Schema.Array(Publication) }).annotate({ identifier: "PublicationsResponse" })
export type PublicationsResponse = typeof PublicationsResponse.Type
