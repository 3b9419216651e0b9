/**
 * Push connectors (delivery.md §9): video sources through WebSub, streaming sources through Twitch
 * EventSub, polling kept as the backstop (PushBackstop.ts).
 * - `sweep` (every worker, PushWorker): subscribes the sources that have active feeds and no
 *   subscription, asks again for those not verified in time, renews WebSub leases before they end,
 *   marks ended leases expired (their sources are polled at once and on their usual interval
 *   again), and unsubscribes sources that lost their feeds. A row is claimed before the hub is
 *   called, so two workers never both ask.
 * - The callbacks (http/push/Hooks.ts) only check and enqueue: a valid notification queues a poll of
 *   its source (a `feed-poll` job, not the item itself: the notification carries no more than a
 *   poll reads, and Twitch's carries less). The poll is the one path that posts, under the
 *   source's lock and its seen ids, so a notification posts what is new exactly once, however
 *   often it arrives, and a forged, late or repeated one is refused before anything is enqueued.
 */
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { pollJobId, PollQueue } from "../delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../delivery/DeliveryScheduling.ts"
import { DeliverySettings } from "../delivery/DeliverySettings.ts"
import { DeliveryStore } from "../delivery/DeliveryStore.ts"
import { JobEngine } from "../jobs/JobEngine.ts"
import { PushHubs, youtubeTopic } from "./PushHubs.ts"
import { eventsubFresh, eventsubSignatureValid, websubSignatureValid } from "./PushSignatures.ts"
import { PushSettings, renewMarginMs } from "./PushSettings.ts"
import type { PushSubscription, PushTopic, Unsubscribed } from "./PushStore.ts"
import { PushStore } from "./PushStore.ts"

/** What a callback answers; http/push/Hooks.ts turns it into the response. */
export type HookAnswer =
  | { readonly _tag: "Challenge"; readonly challenge: string }
  | { readonly _tag: "Accepted" }
  /** Valid but nothing to do (a repeated message id, a topic no longer wanted). */
  | { readonly _tag: "Ignored"; readonly reason: string }
  | { readonly _tag: "Forbidden"; readonly reason: string }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "BadRequest"; readonly message: string }

export interface EventSubHeaders {
  readonly id: string | undefined
  readonly timestamp: string | undefined
  readonly signature: string | undefined
  readonly type: string | undefined
}

export interface PushSweepOutcome {
  readonly subscribed: number
  readonly renewed: number
  readonly expired: number
  readonly removed: number
}

/** Message ids are kept past the 10 minutes of valid timestamps (with margin for clock skew). */
const MESSAGE_KEEP_MS = 20 * 60 * 1000
const BATCH = 100

const token = (bytes: number) => randomBytes(bytes).toString("base64url")
const asUnavailable = (what: string) => (e: { readonly message: string }) => ServiceUnavailable.of(`${what}: ${e.message}`, 30)

export class Push extends Context.Service<Push, {
  readonly sweep: Effect.Effect<PushSweepOutcome, ServiceUnavailable>
  readonly websubVerify: (
    hookId: string,
    q: { readonly mode: string; readonly topic: string; readonly challenge: string; readonly leaseSeconds: number | undefined }
  ) => Effect.Effect<HookAnswer, ServiceUnavailable>
  readonly websubNotify: (hookId: string, signature: string | undefined, body: Uint8Array) => Effect.Effect<HookAnswer, ServiceUnavailable>
  readonly eventsub: (hookId: string, h: EventSubHeaders, body: Uint8Array) => Effect.Effect<HookAnswer, ServiceUnavailable>
}>()("gateway/Push") {
  /** Needs PushStore, PushHubs, PushSettings, DeliveryScheduling, DeliveryStore, JobEngine and DeliverySettings. */
  static readonly layer = Layer.effect(Push, Effect.gen(function*() {
    const store = yield* PushStore
    const hubs = yield* PushHubs
    const settings = yield* PushSettings
    const scheduling = yield* DeliveryScheduling
    const delivery = yield* DeliverySettings
    const deliveryStore = yield* DeliveryStore
    const engine = yield* JobEngine
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const later = (ms: number) => Effect.map(Clock.currentTimeMillis, (t) => new Date(t + ms))
    const callback = (kind: "websub" | "eventsub", hookId: string) => `${settings.publicUrl}/hooks/${kind}?hook=${hookId}`
    const pollNow = (sourceId: string) => scheduling.pollNow(sourceId).pipe(Effect.mapError(asUnavailable("The poll could not be queued")))

    /**
     * The poll a notification asks for. Notifications while a poll waits to start are one job (it
     * will see what they announce); one that arrives while a poll runs queues one more after it
     * (the running poll may have read the source before the news): ids per (source, its last poll).
     */
    const pollForPush = (sourceId: string) =>
      Effect.gen(function*() {
        const source = yield* deliveryStore.source(sourceId)
        if (Option.isNone(source)) return
        const key = (n: number) => pollJobId(`${sourceId}:push:${source.value.lastPollAt?.getTime() ?? "never"}:${n}`, 0)
        for (const n of [0, 1]) {
          const job = yield* engine.job(PollQueue, key(n))
          if (Option.isNone(job) || job.value.state === "created" || job.value.state === "retry") {
            yield* engine.send(PollQueue, { sourceId }, { id: key(n) })
            return
          }
        }
        yield* engine.send(PollQueue, { sourceId })
      }).pipe(Effect.mapError(asUnavailable("The poll could not be queued")))

    const topics = [
      ...(Option.isSome(hubs.websub) ? [{ module: "video", topic: "websub" as const }] : []),
      ...(Option.isSome(hubs.eventsub)
        ? [{ module: "streaming", topic: "stream.online" as const }, { module: "streaming", topic: "stream.offline" as const }]
        : [])
    ]

    /** Asks the hub for the subscription; a refusal is logged and asked again after `retrySeconds`. */
    const ask = (s: Pick<PushSubscription, "id" | "topic" | "hookId" | "secret" | "externalId">, identifier: string) =>
      Effect.gen(function*() {
        yield* store.reopen(s.id)
        if (s.topic === "websub") {
          if (Option.isNone(hubs.websub)) return
          yield* hubs.websub.value.request({
            mode: "subscribe",
            topic: youtubeTopic(identifier),
            callback: callback("websub", s.hookId),
            secret: s.secret,
            leaseSeconds: settings.leaseSeconds
          })
        } else {
          if (Option.isNone(hubs.eventsub)) return
          const api = hubs.eventsub.value
          if (s.externalId !== null) yield* api.remove(s.externalId)
          const id = yield* api.create({ type: s.topic, broadcasterUserId: identifier, callback: callback("eventsub", s.hookId), secret: s.secret })
          yield* store.requested(s.id, id)
        }
      }).pipe(
        Effect.catchTag("PushHubError", (e) =>
          Effect.logWarning("push subscription not taken by the hub; asked again later").pipe(
            Effect.annotateLogs({ topic: s.topic, message: e.message })
          ))
      )

    /** The source lost its feeds (or is gone): unsubscribed at the hub as far as it answers, then forgotten. */
    const drop = (s: PushSubscription) =>
      Effect.gen(function*() {
        if (s.topic === "websub" && Option.isSome(hubs.websub) && s.source !== null) {
          yield* hubs.websub.value.request({
            mode: "unsubscribe",
            topic: youtubeTopic(s.source.identifier),
            callback: callback("websub", s.hookId),
            secret: s.secret,
            leaseSeconds: settings.leaseSeconds
          })
        }
        if (s.topic !== "websub" && Option.isSome(hubs.eventsub) && s.externalId !== null) yield* hubs.eventsub.value.remove(s.externalId)
      }).pipe(
        Effect.catchTag("PushHubError", (e) => Effect.logWarning("push unsubscribe not taken by the hub").pipe(Effect.annotateLogs({ message: e.message }))),
        Effect.andThen(store.remove(s.id))
      )

    const subscribe = (u: Unsubscribed) =>
      Effect.gen(function*() {
        const created = yield* store.create(u, token(24), Redacted.make(token(32)), yield* later(settings.retrySeconds * 1000))
        if (Option.isNone(created)) return 0
        yield* ask(created.value, u.identifier)
        return 1
      })

    const sweep = Effect.gen(function*() {
      const at = yield* now
      const expired = yield* store.expire(at)
      // Polling takes over at once: the source's next poll is now, then on its usual interval.
      for (const sourceId of new Set(expired)) yield* pollNow(sourceId)
      let subscribed = 0
      for (const u of yield* store.unsubscribed(topics, BATCH)) subscribed += yield* subscribe(u)
      let renewed = 0
      let removed = 0
      for (const s of yield* store.due(at, yield* later(settings.retrySeconds * 1000), BATCH)) {
        if (s.source === null || s.activeFeeds === 0 || !topics.some((t) => t.topic === s.topic)) {
          yield* drop(s)
          removed++
        } else {
          yield* ask(s, s.source.identifier)
          renewed++
        }
      }
      yield* store.forgetMessages(new Date(at.getTime() - MESSAGE_KEEP_MS))
      return { subscribed, renewed, expired: expired.length, removed }
    }).pipe(Effect.withSpan("Push.sweep"))

    const websubVerify = (hookId: string, q: { mode: string; topic: string; challenge: string; leaseSeconds: number | undefined }) =>
      Effect.gen(function*() {
        const found = yield* store.byHook(hookId)
        if (Option.isNone(found) || found.value.topic !== "websub") return { _tag: "NotFound" } as const
        const s = found.value
        if (q.challenge === "") return { _tag: "BadRequest", message: "hub.challenge is missing." } as const
        const wanted = s.source !== null && s.activeFeeds > 0
        if (s.source === null || q.topic !== youtubeTopic(s.source.identifier)) return { _tag: "NotFound" } as const
        if (q.mode === "unsubscribe") {
          return wanted ? { _tag: "NotFound" } as const : { _tag: "Challenge", challenge: q.challenge } as const
        }
        if (q.mode === "denied") {
          yield* store.end(s.id, "expired", "The hub denied the subscription.", yield* later(settings.retrySeconds * 1000))
          return { _tag: "Accepted" } as const
        }
        if (q.mode !== "subscribe") return { _tag: "BadRequest", message: "hub.mode must be subscribe, unsubscribe or denied." } as const
        // Only a subscription we asked for and still want is confirmed (never a revoked one).
        if (!wanted || (s.state !== "pending" && s.state !== "active")) return { _tag: "NotFound" } as const
        const lease = q.leaseSeconds ?? settings.leaseSeconds
        const t = yield* Clock.currentTimeMillis
        yield* store.activate(s.id, new Date(t + lease * 1000), new Date(t + lease * 1000 - renewMarginMs(lease)))
        return { _tag: "Challenge", challenge: q.challenge } as const
      }).pipe(Effect.withSpan("Push.websubVerify"))

    const websubNotify = (hookId: string, signature: string | undefined, body: Uint8Array) =>
      Effect.gen(function*() {
        const found = yield* store.byHook(hookId)
        if (Option.isNone(found) || found.value.topic !== "websub") return { _tag: "NotFound" } as const
        const s = found.value
        if (!websubSignatureValid(signature, Redacted.value(s.secret), body)) {
          return { _tag: "Forbidden", reason: "X-Hub-Signature does not match the body." } as const
        }
        if (s.source === null || s.activeFeeds === 0) return { _tag: "Ignored", reason: "no feed delivers from this source" } as const
        yield* pollForPush(s.sourceId)
        return { _tag: "Accepted" } as const
      }).pipe(Effect.withSpan("Push.websubNotify"))

    const eventsub = (hookId: string, h: EventSubHeaders, body: Uint8Array) =>
      Effect.gen(function*() {
        const found = yield* store.byHook(hookId)
        if (Option.isNone(found) || found.value.topic === "websub") return { _tag: "NotFound" } as const
        const s = found.value
        if (h.id === undefined || h.timestamp === undefined || h.signature === undefined || h.type === undefined) {
          return { _tag: "BadRequest", message: "The Twitch-Eventsub-Message-Id, -Timestamp, -Signature and -Type headers are required." } as const
        }
        if (!eventsubSignatureValid(h.signature, Redacted.value(s.secret), h.id, h.timestamp, body)) {
          return { _tag: "Forbidden", reason: "Twitch-Eventsub-Message-Signature does not match." } as const
        }
        if (!eventsubFresh(h.timestamp, yield* Clock.currentTimeMillis)) {
          return { _tag: "Forbidden", reason: "The message is more than 10 minutes old." } as const
        }
        const message = parseEventSub(body)
        if (message === undefined || message.type !== s.topic) {
          return { _tag: "BadRequest", message: `The body is not an EventSub message of ${s.topic}.` } as const
        }
        if (!(yield* store.takeMessage(hookId, h.id))) return { _tag: "Ignored", reason: "repeated message id" } as const
        switch (h.type) {
          case "webhook_callback_verification": {
            if (message.challenge === undefined) return { _tag: "BadRequest", message: "The challenge is missing." } as const
            if (s.source === null || s.activeFeeds === 0 || (s.state !== "pending" && s.state !== "active")) return { _tag: "NotFound" } as const
            yield* store.activate(s.id, null, null)
            return { _tag: "Challenge", challenge: message.challenge } as const
          }
          case "notification": {
            if (s.source === null || s.activeFeeds === 0) return { _tag: "Ignored", reason: "no feed delivers from this source" } as const
            yield* pollForPush(s.sourceId)
            if (s.topic === "stream.offline") {
              // `offline` is posted once the channel stayed offline for the grace: a poll then too.
              const source = { id: s.sourceId, module: "streaming" as const, identifier: s.source.identifier }
              yield* scheduling.planNext(source, yield* later((delivery.offlineGraceSeconds + 1) * 1000)).pipe(
                Effect.mapError(asUnavailable("The poll could not be queued"))
              )
            }
            return { _tag: "Accepted" } as const
          }
          case "revocation": {
            const changed = yield* store.end(s.id, "revoked", `Twitch revoked the subscription (${message.status ?? "no reason"}).`, null)
            if (changed) yield* pollNow(s.sourceId)
            return { _tag: "Accepted" } as const
          }
          default:
            return { _tag: "BadRequest", message: "Unknown Twitch-Eventsub-Message-Type." } as const
        }
      }).pipe(Effect.withSpan("Push.eventsub"))

    return Push.of({ sweep, websubVerify, websubNotify, eventsub })
  }))
}

/** The parts of an EventSub body the callback reads. */
const parseEventSub = (body: Uint8Array): { type: PushTopic | string; status?: string; challenge?: string } | undefined => {
  try {
    const json = JSON.parse(new TextDecoder().decode(body)) as {
      subscription?: { type?: unknown; status?: unknown }
      challenge?: unknown
    }
    const type = json.subscription?.type
    if (typeof type !== "string") return undefined
    return {
      type,
      ...(typeof json.subscription?.status === "string" ? { status: json.subscription.status } : {}),
      ...(typeof json.challenge === "string" ? { challenge: json.challenge } : {})
    }
  } catch {
    return undefined
  }
}
