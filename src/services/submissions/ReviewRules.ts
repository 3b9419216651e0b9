/**
 * Who may review a submission and what a click decides (forms-runtime.md §4), pure: a member with a
 * role of the form's `role_mentions`, or one who may manage the forms module (decisions.md: the
 * owner, ADMINISTRATOR or MANAGE_GUILD; the platform sends the member's computed permissions, the
 * owner's being all of them).
 */
import type { StoredForm } from "../../domain/forms/Form.ts"
import { Permission } from "../platform/ChatPlatform.ts"
import type { Priority } from "./SubmissionsRepo.ts"

export const mayReview = (
  member: { readonly roles: ReadonlyArray<string>; readonly permissions: string },
  form: Pick<StoredForm, "role_mentions">
): boolean => {
  if (member.roles.some((r) => form.role_mentions.includes(r))) return true
  const bits = /^[0-9]{1,30}$/.test(member.permissions) ? BigInt(member.permissions) : 0n
  return (bits & (Permission.ADMINISTRATOR | Permission.MANAGE_GUILD)) !== 0n
}

/** The priority a Pass button carries: one of three, none with `disable_priorities`; undefined when invalid. */
export const passPriority = (
  form: Pick<StoredForm, "disable_priorities">,
  priority: string | undefined
): Priority | null | undefined => {
  if (form.disable_priorities) return priority === undefined ? null : undefined
  return priority === "low" || priority === "medium" || priority === "high" ? priority : undefined
}

/** The review message's line once decided. */
export const decidedLine = (decision: "pass" | "drop", reviewerName: string, priority: Priority | null) =>
  decision === "drop"
    ? `Dropped by ${reviewerName}`
    : priority === null
    ? `Passed by ${reviewerName}`
    : `Passed by ${reviewerName} — priority ${priority}`

/** The member's direct message once decided. */
export const decisionDm = (
  o: { readonly formTitle: string; readonly serverName: string; readonly decision: "pass" | "drop"; readonly reason: string | null; readonly reviewerName: string; readonly anonymize: boolean }
) =>
  o.decision === "pass"
    ? `${o.formTitle} on ${o.serverName}: accepted`
    : [
      `${o.formTitle} on ${o.serverName}: denied`,
      ...(o.reason !== null && o.reason !== "" ? [`Reason: ${o.reason}`] : []),
      ...(o.anonymize ? [] : [`Reviewed by ${o.reviewerName}`])
    ].join("\n")
