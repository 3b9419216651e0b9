/**
 * The job queues of feed delivery and when a source is polled (delivery.md §1, §4, §6).
 * - `feed-poll` {sourceId, slot?}: one poll of one source. Each source has a slot in the interval (a
 *   stable hash of `module:identifier`), so polls spread over it; a poll sends its successor for
 *   the next slot. A poll's job id is derived from (source, slot): whoever sends the poll of a slot
 *   (the chain, the scheduler's repair pass, a feed's creation) sends the same job, stored once.
 * - `feed-post` {webhookId}: sends the pending messages of one webhook, oldest first. Policy
 *   `stately` keyed by webhook: one job running per webhook across every worker (one message in
 *   flight), and one more queued to take what arrives meanwhile.
 * - `feed-tick`: every minute, the repair pass (polls never sent or lost, posts left waiting) and
 *   retention.
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { JobQueue } from "../jobs/JobEngine.ts"

/**
 * `slot`: the planned time (epoch ms) of a poll sent for a slot (the chain, the repair pass, a
 * backoff); absent for a poll asked for now (a refresh, a first poll, push), which always polls.
 * A slotted poll whose slot the source's last recorded poll covers is not run again (a job that
 * pg-boss delivers again after its worker died once the poll was recorded).
 */
export const PollJob = Schema.Struct({ sourceId: Schema.String, slot: Schema.optionalKey(Schema.Number) })
export const PostJob = Schema.Struct({ webhookId: Schema.String })
export const TickJob = Schema.Struct({})

export const PollQueue = JobQueue("feed-poll", PollJob, {
  policy: "standard",
  // A failed attempt (the database, not the source: source failures are handled) is retried soon.
  retryLimit: 3,
  retryDelay: "5 seconds",
  retryBackoff: true,
  expireIn: "5 minutes",
  // A worker that dies (SIGKILL) holds its claimed polls until the next upkeep after this, not 5 minutes.
  heartbeat: "10 seconds",
  deleteAfter: "1 day"
})

export const PostQueue = JobQueue("feed-post", PostJob, {
  policy: "stately",
  retryLimit: 6,
  retryDelay: "10 seconds",
  retryBackoff: true,
  retryDelayMax: "10 minutes",
  expireIn: "10 minutes",
  // Likewise: a dead worker's webhook is not blocked for 10 minutes (the queue runs one job per webhook).
  heartbeat: "10 seconds",
  deleteAfter: "1 day"
})

export const TickQueue = JobQueue("feed-tick", TickJob, {
  policy: "short",
  retryLimit: 0,
  expireIn: "5 minutes",
  deleteAfter: "1 day"
})

export const DeliveryQueues: ReadonlyArray<JobQueue<unknown>> = [PollQueue, PostQueue, TickQueue] as ReadonlyArray<
  JobQueue<unknown>
>

/** The source's offset in its interval, in seconds: stable, spread evenly over [0, interval). */
export const slotOffset = (module: FeedModuleName, identifier: string, intervalSeconds: number): number => {
  const digest = createHash("sha256").update(`${module}:${identifier}`).digest()
  return Number(digest.readBigUInt64BE(0) % BigInt(intervalSeconds))
}

/** The first slot of the source strictly after `after` (epoch ms → epoch ms, whole seconds). */
export const nextSlot = (offsetSeconds: number, intervalSeconds: number, after: number): number => {
  const t = Math.floor(after / 1000)
  const k = Math.floor((t - offsetSeconds) / intervalSeconds) + 1
  return (k * intervalSeconds + offsetSeconds) * 1000
}

/** The job id of the poll of `sourceId` at `at` (epoch ms): a uuid, the same for every sender. */
export const pollJobId = (sourceId: string, at: number): string => {
  const h = createHash("sha256").update(`feed-poll:${sourceId}:${Math.floor(at / 1000)}`).digest("hex")
  // Shaped as a version 5 (name-based) uuid, which is what it is in spirit.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 17), 16) & 3) | 8).toString(16)}${
    h.slice(17, 20)
  }-${h.slice(20, 32)}`
}
