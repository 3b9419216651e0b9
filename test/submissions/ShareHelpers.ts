/**
 * The share tests' steps, against the mounted sandbox itself (no recorder): interactions signed with
 * the sandbox application's own key, the channel messages the sandbox's platform received, the
 * cards its task-board twin holds, faults by route.
 */
import { call } from "../api/SubmissionsHttpFixtures.ts"
import { Effect } from "effect"
import { makeReviewDecision } from "../../src/layers/submissions/ReviewDecision.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import type { Submission } from "../../src/services/submissions/SubmissionsRepo.ts"
import { member } from "./FlowHelpers.ts"
import type { As } from "./InteractionClient.ts"
import { buttonsOf, inputsOf } from "./InteractionClient.ts"
import type { Signer } from "./InteractionSigner.ts"
import { sandboxSigner } from "./InteractionSigner.ts"

/** A sandbox route, unsigned (the submissions tests' `call`), its JSON body as `json`. */
export const sandboxCall = (method: string, path: string, body?: unknown) =>
  Effect.map(call(undefined, method, path, body), (r) => ({ status: r.status, json: r.body }))

export interface InboxMessage {
  readonly id: string
  readonly channel_id: string
  readonly body: Record<string, unknown>
  readonly edits: ReadonlyArray<{ readonly body: Record<string, unknown> }>
}

/** The bots' messages in a channel, oldest first. */
export const channelMessages = (channelId: string) =>
  Effect.map(sandboxCall("GET", `/sandbox/discord/messages?channel_id=${channelId}`), (r) => r.json.messages as ReadonlyArray<InboxMessage>)

export interface TwinCard {
  readonly id: string
  readonly idBoard: string
  readonly idList: string
  readonly idLabels: ReadonlyArray<string>
  readonly name: string
  readonly desc: string
  readonly url: string
  readonly attachments: ReadonlyArray<{ readonly url: string; readonly name: string }>
}

export const twinCards = (boardId: string) =>
  Effect.map(sandboxCall("GET", `/sandbox/taskboard/cards?board_id=${boardId}`), (r) => r.json.cards as ReadonlyArray<TwinCard>)

/** The board's lists and labels as the twin holds them now (GET /sandbox). */
export const twinBoard = (boardId: string) =>
  Effect.map(sandboxCall("GET", "/sandbox"), (r) => {
    const boards = (r.json.taskboard?.boards ?? r.json.taskboard_boards ?? []) as ReadonlyArray<{ id: string; lists: ReadonlyArray<{ id: string; name: string }>; labels: ReadonlyArray<{ id: string; name: string }> }>
    return boards.find((b) => b.id === boardId)
  })

export const fault = (route: string, kind: string, count = 1, path?: string) =>
  sandboxCall("POST", "/sandbox/faults", { route, kind, count, ...(path === undefined ? {} : { path }) })

/** A fault on the bots' posts in one channel of the sandbox's platform. */
export const channelFault = (channelId: string, kind: string, count = 1) =>
  fault("POST /channels/{id}/messages", kind, count, `/sandbox/discord/api/v10/channels/${channelId}/messages`)

/** `as` fills a form of text questions, answers in the questions' order, page after page: the submission's id. */
export const fillText = (as: As, formId: number, answers: ReadonlyArray<string>, signer: Signer = sandboxSigner) =>
  Effect.gen(function*() {
    const m = member(signer, as)
    let modal = yield* m.pick(formId)
    let next = 0
    for (;;) {
      const ids = inputsOf(modal).map((i) => i.input.custom_id!)
      const done = yield* m.submit(modal, Object.fromEntries(ids.map((id) => [id, answers[next++] ?? ""])))
      if (String(done.data?.content).includes("Submitted")) break
      const more = buttonsOf(done).get("Continue")
      if (more === undefined) throw new Error(`not submitted: ${JSON.stringify(done)}`)
      modal = yield* m.click(more)
    }
    const repo = yield* SubmissionsRepo
    const { submissions } = yield* repo.list(formId, { offset: 0, limit: 50 })
    return submissions.find((s) => s.userId === as.userId)!.id
  })

/** Until the submission's review message is posted (so a fault set next is not taken by it). */
export const reviewPosted = (id: string) =>
  Effect.gen(function*() {
    const repo = yield* SubmissionsRepo
    for (let i = 0; i < 300; i++) {
      const s = yield* repo.get(id)
      if (s?.effects.find((e) => e.kind === "review_message")?.state === "done") return
      yield* Effect.sleep("50 millis")
    }
    throw new Error(`the review message of submission ${id} was never posted`)
  })

/** A Pass from the panel (the same decision the buttons take). */
export const pass = (id: string, priority: "low" | "medium" | "high" | null = "high") =>
  Effect.gen(function*() {
    const decide = yield* makeReviewDecision
    const outcome = yield* decide(id, { decision: "pass", priority, reason: null, reviewerId: "100000000000000010", reviewerName: "mod", reviewerAvatar: null }, { editMessage: true })
    if (outcome._tag !== "Decided") throw new Error(`not decided: ${outcome._tag}`)
  })

/** Until every share effect of the submission is settled (done or failed), at most 30 s (a retry waits 5 s). */
export const settled = (id: string) =>
  Effect.gen(function*() {
    const repo = yield* SubmissionsRepo
    for (let i = 0; i < 600; i++) {
      const s = yield* repo.get(id)
      const share = s?.effects.filter((e) => e.kind === "summary" || e.kind === "card") ?? []
      if (s !== undefined && share.length > 0 && share.every((e) => e.state !== "pending")) return s as Submission
      yield* Effect.sleep("50 millis")
    }
    throw new Error(`the share effects of submission ${id} never settled`)
  })
