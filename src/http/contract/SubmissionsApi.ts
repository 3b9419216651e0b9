/**
 * The forms module's publications and submissions (forms-runtime.md §2, §6): same prefix and access
 * rules as the forms routes (who may manage the forms module). No server code here.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Success } from "../../domain/auth/Token.ts"
import { BadRequest, Conflict } from "../../domain/infra/Errors.ts"
import { FormIdParam } from "../../domain/infra/Ids.ts"
import {
  MessageIdParam,
  PublicationsResponse,
  Published,
  PublishInput,
  ReviewInput,
  SubmissionDetail,
  SubmissionIdParam,
  SubmissionsPage,
  SubmissionsQuery
} from "../../domain/submissions/Submission.ts"
import { bodyExample } from "./Examples.ts"
import { moduleErrors, serverParams } from "./ApiParams.ts"
import { Authorization, Idempotency } from "./Middleware.ts"

const formParams = { ...serverParams, formId: FormIdParam }
const submissionParams = { ...formParams, submissionId: SubmissionIdParam }

export class SubmissionsGroup extends HttpApiGroup.make("submissions")
  .add(
    HttpApiEndpoint.post("publish", "/:formId/publish", {
      params: formParams,
      payload: PublishInput,
      success: Published,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Publish a form: the bot posts its start message in a channel",
      description:
        "`channel_id`: a text or news channel of the server. The form needs steps and an authorization channel (`form.steps`, `form.channel_id` in the 400). Audited (PATCH)."
    })).annotate(OpenApi.Transform, bodyExample({ channel_id: "200000000000000001" })).middleware(Idempotency),
    HttpApiEndpoint.get("publications", "/:formId/publications", {
      params: formParams,
      success: PublicationsResponse,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "The start messages of a form, newest first"),
    HttpApiEndpoint.delete("unpublish", "/:formId/publications/:messageId", {
      params: { ...formParams, messageId: MessageIdParam },
      success: Success,
      error: moduleErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Delete a start message",
      description: "Deletes the message on the platform and removes it from the list (also when the platform has it no longer). Audited (PATCH)."
    })).middleware(Idempotency),
    HttpApiEndpoint.get("list", "/:formId/submissions", {
      params: formParams,
      query: SubmissionsQuery,
      success: SubmissionsPage,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "The submissions of a form",
      description: "Newest first. `status`: pending, accepted or denied. `page_size` 1–100 (default 10), `page` ≥ 1 (default 1); past `page_max`, an empty page."
    })),
    HttpApiEndpoint.get("get", "/:formId/submissions/:submissionId", {
      params: submissionParams,
      success: SubmissionDetail,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "One submission: its answers (from the form as the member saw it), review and effects"),
    HttpApiEndpoint.post("review", "/:formId/submissions/:submissionId/review", {
      params: submissionParams,
      payload: ReviewInput,
      success: SubmissionDetail,
      error: [BadRequest.wire, Conflict.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Review a submission as the signed-in user",
      description:
        "The same effects as the review buttons. `priority` only with `pass` (not when the form has `disable_priorities`); `reason` (at most 1,000 characters) only with `drop`. 409 when already reviewed, naming who. Audited (PATCH)."
    })).annotate(OpenApi.Transform, bodyExample({ decision: "pass", priority: "high" })).middleware(Idempotency)
  )
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/forms")
  .annotate(OpenApi.Description, "A form's publications (its start messages in channels) and its submissions, reviewed from the panel.")
{}
