/**
 * A review from the panel (forms-runtime.md §6), checked against the submission's form, pure: a
 * priority only with pass and never with `disable_priorities`, a reason (≤ 1,000 characters) only
 * with drop. Every problem is one 400 item naming its field.
 */
import { Result } from "effect"
import type { StoredForm } from "../../domain/forms/Form.ts"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import type { ReviewInput } from "../../domain/submissions/Submission.ts"
import type { Priority } from "./SubmissionsRepo.ts"

export const REASON_MAX = 1000

const problem = (path: string, message: string): Problem => ({ message, additionalProperties: { path } })

export const checkReview = (
  input: ReviewInput,
  form: Pick<StoredForm, "disable_priorities">
): Result.Result<{ readonly decision: "pass" | "drop"; readonly priority: Priority | null; readonly reason: string | null }, BadRequest> => {
  const problems: Array<Problem> = []
  if (input.priority !== undefined && input.decision !== "pass") problems.push(problem("priority", "priority is given only with the decision pass"))
  else if (input.priority !== undefined && form.disable_priorities) problems.push(problem("priority", "this form has priorities disabled: pass without a priority"))
  if (input.reason !== undefined && input.decision !== "drop") problems.push(problem("reason", "reason is given only with the decision drop"))
  else if (input.reason !== undefined && [...input.reason].length > REASON_MAX) problems.push(problem("reason", `reason must be at most ${REASON_MAX} characters`))
  if (problems.length > 0) return Result.fail(BadRequest.many(problems))
  const reason = input.reason === undefined || input.reason.trim() === "" ? null : input.reason
  return Result.succeed({ decision: input.decision, priority: input.priority ?? null, reason: input.decision === "drop" ? reason : null })
}
