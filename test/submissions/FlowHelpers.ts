/** The forms runtime's tests' shared steps: forms through the API as alice, members clicking as the platform sends it. */
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, BOB_ID, CHANNEL_INDEX, channelId, roleId, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { json, raw, tokenOf } from "../utils/TestApp.ts"
import type { Answer } from "./InteractionClient.ts"
import { filled, interaction, send } from "./InteractionClient.ts"
import type { As } from "./InteractionClient.ts"
import type { Signer } from "./InteractionSigner.ts"

export const FORMS = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules/forms`
export const REVIEW_CHANNEL = channelId(1, CHANNEL_INDEX.text)
export const MODERATORS = roleId(1, 1)
export const bob: As = { userId: BOB_ID, username: "bob", roles: [roleId(1, 2)] }
export const carol: As = { userId: "100000000000000003", username: "carol" }
export const mod: As = { userId: "100000000000000010", username: "mod", roles: [MODERATORS] }
/** Alice owns the server: the platform sends her every permission. */
export const alice: As = { userId: ALICE_ID, username: "alice", permissions: String((1n << 51n) - 1n) }

const short = (string: string, extra: Record<string, unknown> = {}) => ({ type: "message", string, char_limit: [1, 100], ...extra })

/** Seven steps on two pages: five short questions (one with validation words), then a choice and a long question. */
export const sevenSteps = [
  short("Your name?"),
  short("Your age?"),
  short("Do you accept the rules?", { answers_validation: ["yes", "I agree"] }),
  short("Your timezone?"),
  { type: "message", string: "Why do you want to join?", char_limit: [5, 1000], alias: "Motivation" },
  { type: "reaction", string: "Favourite colour?", answers_validation: ["Red", "Blue"] },
  { type: "message", string: `Tell us about a project you are proud of, what you did in it, and what you learned from it ${"(details welcome) ".repeat(3)}`, char_limit: [1, 300] }
]

export const formBody = (over: Record<string, unknown> = {}) => ({
  title: "Staff application",
  workflow_live: true,
  channel_id: REVIEW_CHANNEL,
  role_mentions: [MODERATORS],
  color_hex: "#3366ff",
  steps: sevenSteps,
  ...over
})

/** Creates a form as alice: its id. */
export const createForm = (over: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const res = yield* raw({ method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify(formBody(over)) }, FORMS)
    const body = yield* json(res)
    if (res.status !== 200) throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`)
    return body.workflow_id as number
  })

export const updateForm = (id: number, over: Record<string, unknown>) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const res = yield* raw({ method: "PATCH", token, headers: { "content-type": "application/json" }, body: JSON.stringify(formBody(over)) }, `${FORMS}/${id}`)
    if (res.status !== 200) throw new Error(`update answered ${res.status}`)
  })

export const deleteForm = (id: number) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const res = yield* raw({ method: "DELETE", token }, `${FORMS}/${id}`)
    if (res.status !== 200) throw new Error(`delete answered ${res.status}`)
  })

/** A member acting in server S1 through BOT1, signed with its key. */
export const member = (signer: Signer, as: As) => {
  const go = (type: number, data: unknown, extra: Record<string, unknown> = {}) =>
    Effect.map(send(BOT1_ID, interaction(BOT1_ID, S1_ID, as, type, data, extra), { signer }), (r) => {
      if (r.status !== 200) throw new Error(`the gateway answered ${r.status}: ${JSON.stringify(r.body)}`)
      return r.body
    })
  return {
    command: () => go(2, { id: "1", name: "submit", type: 1 }),
    pick: (formId: number) => go(3, { custom_id: "f:pick", component_type: 3, values: [String(formId)] }, { message: { id: "1" } }),
    click: (customId: string, messageId = "1") => go(3, { custom_id: customId, component_type: 2 }, { message: { id: messageId } }),
    submitRaw: (customId: string, components: ReadonlyArray<unknown>) => go(5, { custom_id: customId, components }),
    /** Fills the modal `modal` with `values` by its inputs' custom ids and submits it. */
    submit: (modal: Answer, values: Record<string, string | ReadonlyArray<string>>) =>
      go(5, { custom_id: modal.data!.custom_id, components: filled(modal, values) })
  }
}
