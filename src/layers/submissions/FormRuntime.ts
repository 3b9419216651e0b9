/**
 * The forms runtime's answers to interactions (forms-runtime.md §2–§4): `/submit`, the form picker,
 * Start, Continue and Fix buttons and the pages' modal submits (FormFilling.ts), and the review
 * buttons. Every interaction records its id first (or with its first read): a replay is answered
 * "already handled" and changes nothing. Every answer is read and written in the database only:
 * what calls the platform (the review message, the DM) is a job recorded in the same transaction
 * (layers/submissions/SubmissionJobs.ts).
 */
import { Effect, Option, Schema } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { StoredForm } from "../../domain/forms/Form.ts"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import { actorOf, CommandData, ComponentData, displayName, ephemeral, InteractionType, ModalData } from "../../services/submissions/Interaction.ts"
import type { Interaction, InteractionAnswer } from "../../services/submissions/Interaction.ts"
import { decidedLine, mayReview, passPriority } from "../../services/submissions/ReviewRules.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import { parseVoteCustomId } from "../../services/submissions/Share.ts"
import { ALREADY_HANDLED, makeFormFilling } from "./FormFilling.ts"
import type { Ctx } from "./FormFilling.ts"
import { makeReviewDecision } from "./ReviewDecision.ts"
import { makeSeenInteractions } from "./SeenInteractionsSql.ts"
import { makeShareVotes } from "./ShareVotes.ts"

const say = ephemeral

const decode = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownOption(schema as unknown as Schema.Codec<S["Type"], unknown>)
const command = decode(CommandData)
const component = decode(ComponentData)
const modal = decode(ModalData)

export const makeFormRuntime = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const apps = yield* BotApplications
  const decide = yield* makeReviewDecision
  const vote = yield* makeShareVotes
  const seen = yield* makeSeenInteractions
  const filling = yield* makeFormFilling(seen.firstSeen)

  /** For the paths that read nothing with the id: its record on its own, then the answer. */
  const once = (i: Interaction, answer: Effect.Effect<InteractionAnswer, ServiceUnavailable>) =>
    Effect.flatMap(seen.firstSeen(i.id), (first) => (first ? answer : Effect.succeed(ALREADY_HANDLED)))
  const told = (c: Ctx, text: string) => once(c.i, Effect.succeed(say(text)))

  const review = (c: Ctx, submissionId: string, decision: "pass" | "drop", priorityText: string | undefined, reason: string | null) =>
    Effect.gen(function*() {
      const s = yield* repo.get(submissionId)
      if (s === undefined || s.botId !== c.botId || s.serverId !== c.serverId) return say("This submission no longer exists.")
      if (!mayReview(c.member, s.snapshot)) return say("You may not review this form's submissions.")
      if (s.status !== "pending") return say(`Already reviewed by ${s.reviewerName ?? "someone"}.`)
      const priority = decision === "pass" ? passPriority(s.snapshot, priorityText) : null
      if (priority === undefined) return say("This button is not known.")
      if (decision === "drop" && reason === null) {
        return {
          type: 9,
          data: {
            custom_id: `r:dropm:${s.id}`,
            title: "Drop this submission",
            components: [{
              type: 18,
              label: "Reason (optional)",
              description: "Sent to the member with the decision.",
              component: { type: 4, custom_id: "reason", style: 2, required: false, max_length: 1000 }
            }]
          }
        } satisfies InteractionAnswer
      }
      const outcome = yield* decide(s.id, {
        decision,
        priority,
        reason: reason === "" ? null : reason,
        reviewerId: c.member.user.id,
        reviewerName: c.name,
        reviewerUsername: c.member.user.username,
        reviewerAvatar: c.member.user.avatar ?? null
      }, { editMessage: false })
      if (outcome._tag === "NotFound") return say("This submission no longer exists.")
      if (outcome._tag === "AlreadyReviewed") return say(`Already reviewed by ${outcome.reviewerName}.`)
      // The review message itself, edited in the answer: its buttons gone, the decision said.
      return {
        type: 7,
        data: { content: decidedLine(decision, c.name, priority), components: [], allowed_mentions: { parse: [] } }
      } satisfies InteractionAnswer
    })

  const dropReason = (components: ReadonlyArray<unknown>): string | undefined => {
    const top = components[0] as { type?: unknown; component?: { custom_id?: unknown; value?: unknown } } | undefined
    if (components.length !== 1 || top?.type !== 18 || top.component?.custom_id !== "reason") return undefined
    const value = top.component.value
    if (value === undefined || value === null) return ""
    return typeof value === "string" && [...value].length <= 1000 ? value : undefined
  }

  const FORM_ID = /^[1-9][0-9]{0,15}$/
  const dispatch = (c: Ctx): Effect.Effect<InteractionAnswer, ServiceUnavailable> => {
    const { i } = c
    if (i.type === InteractionType.COMMAND) {
      const data = command(i.data)
      return Option.isSome(data) && data.value.name === "submit" ? filling.list(c) : told(c, "This command is not known.")
    }
    if (i.type === InteractionType.COMPONENT) {
      const data = component(i.data)
      if (Option.isNone(data)) return told(c, "This component is not known.")
      const parts = data.value.custom_id.split(":")
      const [scope, verb, id, extra] = parts
      if (data.value.custom_id === "f:pick" && data.value.component_type === 3) {
        const value = data.value.values?.length === 1 ? data.value.values[0]! : ""
        return FORM_ID.test(value) ? filling.start(c, Number(value)) : told(c, "Choose one of the forms.")
      }
      if (data.value.component_type !== 2) return told(c, "This component is not known.")
      if (scope === "f" && verb === "start" && id !== undefined && FORM_ID.test(id) && parts.length === 3) return filling.start(c, Number(id))
      if (scope === "f" && verb === "open" && id !== undefined && parts.length === 3) return filling.open(c, id)
      if (scope === "r" && verb === "pass" && id !== undefined && parts.length <= 4) return once(i, review(c, id, "pass", extra, null))
      if (scope === "r" && verb === "drop" && id !== undefined && parts.length === 3) return once(i, review(c, id, "drop", undefined, null))
      const voted = parseVoteCustomId(data.value.custom_id)
      if (voted !== undefined) return once(i, vote({ botId: c.botId, serverId: c.serverId, userId: c.member.user.id }, voted))
      return told(c, "This button is not known.")
    }
    if (i.type === InteractionType.MODAL_SUBMIT) {
      const data = modal(i.data)
      if (Option.isNone(data)) return told(c, "These answers cannot be taken: the form's fields are missing. Nothing was saved.")
      const parts = data.value.custom_id.split(":")
      const [scope, verb, id, page] = parts
      if (scope === "f" && verb === "page" && id !== undefined && page !== undefined && /^[0-9]{1,2}$/.test(page) && parts.length === 4) {
        return filling.submitPage(c, id, Number(page), data.value.components)
      }
      if (scope === "r" && verb === "dropm" && id !== undefined && parts.length === 3) {
        const reason = dropReason(data.value.components)
        return reason === undefined ? told(c, "The reason must be at most 1,000 characters.") : once(i, review(c, id, "drop", undefined, reason))
      }
      return told(c, "This form is not known.")
    }
    return told(c, "This kind of interaction is not handled here.")
  }

  /** The answer to a verified interaction that is not a PING; its id recorded (a replay: ALREADY_HANDLED, nothing done). */
  return (i: Interaction): Effect.Effect<InteractionAnswer, ServiceUnavailable> =>
    Effect.gen(function*() {
      const app = yield* apps.byApplication(i.application_id)
      const user = actorOf(i)
      if (app === undefined || user === undefined) return yield* once(i, Effect.succeed(say("This bot is not set up for forms.")))
      if (i.guild_id === undefined || i.member === undefined) return yield* once(i, Effect.succeed(say("Forms are filled in a server: use /submit there.")))
      const name = displayName(i.member.user, i.member.nick)
      return yield* dispatch({ i, botId: app.botId, serverId: i.guild_id, member: i.member, name })
    }).pipe(Effect.tap(() => seen.prune))
})

export type FormRuntime = Effect.Success<typeof makeFormRuntime>
export type { StoredForm }
