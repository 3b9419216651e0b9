/** The sandbox's member player as the forms tests drive it (OnSandbox.test.ts, ApiRole.test.ts). */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { BOT1_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { json, raw } from "../utils/TestApp.ts"
import { REVIEW_CHANNEL } from "./FlowHelpers.ts"

export interface Played {
  readonly status: number | null
  readonly response: { type: number; data?: any } | null
  readonly problems: ReadonlyArray<string>
  readonly message_id?: string
  readonly interaction_id: string
}
/** A bot's message as the sandbox's inbox gives it back: the body as sent (attachments by name), its earlier versions. */
export interface SandboxMessage {
  readonly id: string
  readonly channel_id: string
  readonly ephemeral_for: string | null
  readonly body: SandboxBody
  readonly edits: ReadonlyArray<{ readonly body: SandboxBody }>
}
export interface SandboxBody {
  readonly content?: string
  readonly embeds?: Array<any>
  readonly components?: Array<any>
  readonly allowed_mentions?: unknown
  readonly attachments?: ReadonlyArray<string>
  readonly nonce?: string
}

export const post = (path: string, body: unknown, method = "POST") =>
  raw({ method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, path)

/** A member's action through the player; the player's verdict must be clean unless `dirty`. */
export const play = (userId: string, body: Record<string, unknown>, dirty = false) =>
  Effect.gen(function*() {
    const res = yield* post("/sandbox/discord/interactions", { bot_id: BOT1_ID, user_id: userId, guild_id: S1_ID, channel_id: REVIEW_CHANNEL, ...body })
    const played = (yield* json(res)) as Played
    assert.strictEqual(res.status, 200, JSON.stringify(played))
    if (!dirty) assert.deepStrictEqual(played.problems, [], JSON.stringify(played.response))
    return played
  })
export const buttonOf = (p: Played | SandboxMessage, label: RegExp): string => {
  const components = "body" in p ? p.body.components : p.response?.data?.components
  const found = (components ?? []).flatMap((r: any) => r.components ?? []).find((c: any) => c.type === 2 && label.test(c.label))
  assert.isDefined(found, `no button ${label}`)
  return found.custom_id
}
export const inputs = (p: Played): Array<string> =>
  (p.response?.data?.components ?? []).filter((c: any) => c.type === 18).map((c: any) => c.component.custom_id)
export const messages = (query: string) =>
  Effect.map(Effect.flatMap(raw({}, `/sandbox/discord/${query}`), json), (b) => b.messages as Array<SandboxMessage>)
/** How many calls the sandbox's platform took on a Discord route (`GET /sandbox/stats`), e.g. `"POST /channels/{id}/messages"`. */
export const callsTo = (route: string) =>
  Effect.map(Effect.flatMap(raw({}, "/sandbox/stats"), json), (stats) => (stats.calls[route] ?? 0) as number)
export const eventuallyEffect = <A, E, R>(f: Effect.Effect<A | undefined, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const a = yield* f
      if (a !== undefined) return a
      yield* Effect.sleep("50 millis")
    }
    throw new Error("never happened")
  })
export const reviewMessage = (id: string) =>
  eventuallyEffect(Effect.map(messages(`messages?channel_id=${REVIEW_CHANNEL}`), (ms) =>
    ms.find((m) => m.ephemeral_for === null && JSON.stringify(m.body.embeds ?? []).includes(`Submission ${id}`))))
export const submissionOf = (formId: number, userId: string) =>
  Effect.gen(function*() {
    const { submissions } = yield* (yield* SubmissionsRepo).list(formId, { offset: 0, limit: 50 })
    return submissions.find((s) => s.userId === userId)!.id
  })
export const twoSteps = [
  { type: "message", string: "Name?", char_limit: [1, 20] },
  { type: "reaction", string: "Team?", answers_validation: ["Red", "Blue"] }
]
/** `userId` fills a one-page form through the player: the submission's id. */
export const fill = (userId: string, formId: number) =>
  Effect.gen(function*() {
    const list = yield* play(userId, { action: "command", name: "submit" })
    const modal = yield* play(userId, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(formId)] })
    assert.strictEqual(modal.response?.type, 9, JSON.stringify(modal.response))
    const [name, team] = inputs(modal)
    const done = yield* play(userId, { action: "submit", fields: { [name!]: "Someone", [team!]: ["1"] } })
    assert.include(done.response?.data?.content, "Submitted")
    return yield* submissionOf(formId, userId)
  })
export const waitForKeys = eventuallyEffect(Effect.map(
  Effect.flatMap(post("/sandbox/discord/interactions", { bot_id: BOT1_ID, action: "ping" }), json),
  (p: Played) => (p.problems.length === 0 ? p : undefined)
))

