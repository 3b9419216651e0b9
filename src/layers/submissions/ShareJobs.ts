/**
 * What a Pass shares (forms-runtime.md §5), as one job per submission under delivery.md §4's rules:
 * in task-board mode the card first (its list and labels found by name or created, the card, its
 * URL attachments), then the public summary in every forwarding channel. Every effect is a
 * `submission_effects` row written in the review's transaction, before anything is sent; the job
 * skips what is done, so a retry (5xx, time-out, a worker killed) resumes where it stopped:
 * - a summary is posted with a `nonce` derived from (submission, channel) and `enforce_nonce`: a
 *   post whose answer was lost is answered with the first message, never a second one;
 * - a card is created with a marker, written on the effect before the create, as the last line of
 *   its description: a job that finds a marker it did not write looks for the card on the board
 *   (`cards`) before creating, so a card made by a worker killed before recording it is found, not
 *   made again. Attachments done are counted on the effect (`progress`).
 * A refusal that will not heal (a channel's 400/403/404, the board refusing the credentials, the
 * board gone) settles the effect `failed` with its reason; anything else fails the job, retried.
 */
import { Effect, Layer, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { Bots } from "../../services/platform/Bots.ts"
import { ChatPlatform, PlatformRejected } from "../../services/platform/ChatPlatform.ts"
import { JobEngine, JobQueue } from "../../services/jobs/JobEngine.ts"
import { truncate } from "../../services/delivery/render/Text.ts"
import { failureText } from "../../services/submissions/FailureText.ts"
import { CARD_LIMITS, cardPlan, summaryMessage } from "../../services/submissions/Share.ts"
import type { CardPlan } from "../../services/submissions/Share.ts"
import { shareInputOf, sharesToBoard } from "../../services/submissions/ShareInput.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { Submission } from "../../services/submissions/SubmissionsRepo.ts"
import { TaskBoard, TaskBoardError } from "../../services/taskboard/TaskBoard.ts"
import { makeShareStore } from "./ShareStoreSql.ts"

const Job = Schema.Struct({ submission_id: Schema.String })

const SHARE_RETRY_LIMIT = 8

export const ShareQueue = JobQueue("submission-share", Job, {
  policy: "standard",
  retryLimit: SHARE_RETRY_LIMIT,
  retryDelay: "5 seconds",
  retryBackoff: true,
  retryDelayMax: "5 minutes",
  expireIn: "5 minutes",
  heartbeat: "10 seconds",
  deleteAfter: "1 day"
})

/**
 * After a vote: every summary of the submission shows the counts (forms-runtime.md §5). The click's
 * own message is answered with UPDATE_MESSAGE at once; the summaries in the other forwarding
 * channels, and the clicked one again (two answers computed at once may land out of order), are
 * edited by this job with the counts read when it runs. `stately`: one waiting and one running per
 * submission, so a burst of votes is one or two rounds of edits, never one per vote.
 */
export const VotesQueue = JobQueue("submission-votes", Job, {
  policy: "stately",
  retryLimit: 5,
  retryDelay: "5 seconds",
  retryBackoff: true,
  retryDelayMax: "1 minute",
  expireIn: "2 minutes",
  deleteAfter: "1 hour"
})

/** One share job per submission, whoever decides it. */
export const shareJobId = (submissionId: string) => `00000000-0000-4000-b000-${BigInt(submissionId).toString(16).padStart(12, "0")}`

/** The summary's nonce in a channel: at most 25 characters (the platform's limit), one per (submission, channel). */
export const summaryNonce = (submissionId: string, channelId: string) =>
  createHash("sha256").update(`summary:${submissionId}:${channelId}`).digest("hex").slice(0, 25)

/** The card's description: the plan's, then the marker on a line of its own. */
export const cardDescription = (plan: CardPlan, marker: string) => {
  const tail = `[ref ${marker}]`
  return plan.desc === "" ? tail : `${truncate(plan.desc, CARD_LIMITS.desc - tail.length - 2)}\n\n${tail}`
}

/** The effects a Pass records (in the review's transaction): a summary per channel, the card. */
export const shareEffects = (s: Submission) => [
  ...(sharesToBoard(s) ? [{ kind: "card" as const, target: s.snapshot.taskboard_board, channelId: null }] : []),
  ...[...new Set(s.snapshot.fwd_channel_ids)].map((c) => ({ kind: "summary" as const, target: c, channelId: c }))
]

const refusal = (e: PlatformRejected, channelId: string) =>
  `The platform refused the summary in channel ${channelId} (${e.status}${e.code === undefined ? "" : ` ${e.code}`}): ${e.message}`
const permanentPost = (e: unknown): e is PlatformRejected =>
  e instanceof PlatformRejected && (e.status === 400 || e.status === 401 || e.status === 403 || e.status === 404)

export const makeShareJobs = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const chat = yield* ChatPlatform
  const bots = yield* Bots
  const board = yield* TaskBoard
  const store = yield* makeShareStore

  const findOrCreateList = (s: Submission, boardId: string, plan: CardPlan) =>
    Effect.gen(function*() {
      const lists = yield* board.lists(s.serverId, boardId)
      const wanted = plan.list_name
      const found = wanted === null ? lists[0] : lists.find((l) => l.name.trim() === wanted.trim())
      return found ?? (yield* board.createList(s.serverId, boardId, wanted ?? s.snapshot.title))
    })

  const findOrCreateLabels = (s: Submission, boardId: string, plan: CardPlan) =>
    Effect.gen(function*() {
      if (plan.label_names.length === 0) return []
      const labels = yield* board.labels(s.serverId, boardId)
      return yield* Effect.forEach(plan.label_names, (name) => {
        const found = labels.find((l) => l.name.trim() === name.trim())
        return found === undefined ? Effect.map(board.createLabel(s.serverId, boardId, name), (l) => l.id) : Effect.succeed(found.id)
      })
    })

  /** The card, made once; its id and URL recorded, then its attachments. */
  const makeCard = (s: Submission, boardId: string, cardId: string | null, last: boolean) =>
    Effect.gen(function*() {
      const plan = cardPlan(shareInputOf(s))
      let id = cardId
      if (id === null) {
        const fresh = `gw-${randomBytes(9).toString("base64url")}`
        const marker = (yield* store.cardMarker(s.id, boardId, fresh)) ?? fresh
        // A marker this run did not write: an earlier run may have made the card before it was recorded.
        const earlier = marker === fresh ? undefined : (yield* board.cards(s.serverId, boardId)).find((c) => c.desc.includes(`[ref ${marker}]`))
        const card = earlier ?? (yield* board.createCard(s.serverId, {
          idList: (yield* findOrCreateList(s, boardId, plan)).id,
          name: plan.name,
          desc: cardDescription(plan, marker),
          idLabels: yield* findOrCreateLabels(s, boardId, plan)
        }))
        yield* store.cardMade(s.id, boardId, card.id, card.url)
        id = card.id
      }
      const done = yield* store.progress(s.id, boardId)
      for (let i = done; i < plan.attachment_urls.length; i++) {
        yield* board.attachUrl(s.serverId, id, plan.attachment_urls[i]!).pipe(
          // A URL the board will not take is left out; the card and the rest still go.
          Effect.catchIf((e) => e.reason === "invalid", (e) => Effect.logWarning("an attachment was refused", { submission: s.id, reason: e.message }))
        )
        yield* store.setProgress(s.id, boardId, i + 1)
      }
      yield* repo.settleEffect(s.id, "card", boardId, { state: "done", reason: null, messageId: id })
    }).pipe(
      // A refusal that will not heal is kept; on the last attempt, so is one that might have.
      Effect.catch((e) =>
        e instanceof TaskBoardError && (!e.retryable || last)
          ? repo.settleEffect(s.id, "card", boardId, {
            state: "failed",
            reason: `${e.retryable ? "The task board kept failing" : "The task board refused the card"}: ${e.message}`,
            messageId: null
          })
          : Effect.fail(e))
    )

  const postSummary = (s: Submission, channelId: string, last: boolean) =>
    Effect.gen(function*() {
      const bot = yield* bots.get(s.botId)
      if (bot === undefined) {
        return yield* repo.settleEffect(s.id, "summary", channelId, { state: "failed", reason: "The form's bot is gone.", messageId: null })
      }
      const body = summaryMessage(shareInputOf(s))
      const outcome = yield* chat.createMessage(bot.token, channelId, { ...body, nonce: summaryNonce(s.id, channelId), enforce_nonce: true }).pipe(
        Effect.map((messageId) => ({ state: "done" as const, reason: null, messageId })),
        Effect.catchIf(permanentPost, (e) => Effect.succeed({ state: "failed" as const, reason: refusal(e, channelId), messageId: null })),
        Effect.catchIf(() => last, (e) =>
          Effect.succeed({ state: "failed" as const, reason: `The platform kept failing for the summary in channel ${channelId}: ${failureText(e)}`, messageId: null }))
      )
      yield* repo.settleEffect(s.id, "summary", channelId, outcome)
    })

  /**
   * The job: the card, then each pending summary; a failure that may heal fails the job after the
   * others are tried. On the `last` attempt such a failure is kept on its effect instead.
   */
  const share = (id: string, last = false) =>
    Effect.gen(function*() {
      const first = yield* repo.get(id)
      if (first === undefined || first.status !== "accepted") return
      const card = first.effects.find((e) => e.kind === "card")
      if (card !== undefined && card.state === "pending") yield* makeCard(first, card.target, card.message_id, last)
      const s = card === undefined ? first : (yield* repo.get(id))!
      const pending = s.effects.filter((e) => e.kind === "summary" && e.state === "pending")
      const results = yield* Effect.forEach(pending, (e) => Effect.result(postSummary(s, e.target, last)))
      const failed = results.find((r) => r._tag === "Failure")
      if (failed !== undefined && failed._tag === "Failure") return yield* Effect.fail(failed.failure)
    })

  /** Every posted summary of the submission edited to show the counts now; a summary gone or closed to the bot is left. */
  const refreshVotes = (id: string) =>
    Effect.gen(function*() {
      const s = yield* repo.get(id)
      if (s === undefined || s.status !== "accepted") return
      const bot = yield* bots.get(s.botId)
      if (bot === undefined) return
      const { components } = summaryMessage(shareInputOf({ ...s, votes: yield* store.votes(id) }))
      const posted = s.effects.filter((e) => e.kind === "summary" && e.state === "done" && e.message_id !== null)
      yield* Effect.forEach(posted, (e) =>
        chat.editMessage(bot.token, e.target, e.message_id!, { components }).pipe(
          Effect.catchIf(permanentPost, (error) =>
            Effect.logInfo("a summary's vote counts were not updated", { submission: id, channel: e.target, status: error.status }))
        ), { discard: true })
    })

  return { share, refreshVotes }
})

/** A worker's share of the share jobs. Needs SubmissionsRepo, ChatPlatform, Bots, TaskBoard, SqlClient, JobEngine. */
export const ShareWorker = Layer.effectDiscard(Effect.gen(function*() {
  const engine = yield* JobEngine
  const jobs = yield* makeShareJobs
  yield* engine.work(ShareQueue, ({ submission_id }, job) =>
    jobs.share(submission_id, job.retryCount >= SHARE_RETRY_LIMIT).pipe(
      Effect.tapError((error) => Effect.logWarning(`sharing submission ${submission_id} failed; the job will be retried`, error))
    ), { batchSize: 5, localConcurrency: 2, pollingInterval: "0.5 seconds" })
  yield* engine.work(VotesQueue, ({ submission_id }) =>
    jobs.refreshVotes(submission_id).pipe(
      Effect.tapError((error) => Effect.logWarning(`updating the vote counts of submission ${submission_id} failed; the job will be retried`, error))
    ), { batchSize: 5, localConcurrency: 2, pollingInterval: "0.5 seconds" })
}))
