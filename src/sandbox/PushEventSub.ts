/**
 * The sandbox's Twitch EventSub (webhook transport), next to the Helix twin:
 * `POST /sandbox/streaming/helix/eventsub/subscriptions` (Client-Id and bearer token, as Helix;
 * `stream.online` / `stream.offline` with `condition.broadcaster_user_id`) answers 202 with the
 * subscription `webhook_callback_verification_pending`, then sends the
 * `webhook_callback_verification` message: `enabled` if the callback echoes the challenge.
 * `DELETE …/subscriptions?id=` removes one. Every message is signed as Twitch does:
 * `Twitch-Eventsub-Message-Signature: sha256=HMAC(secret, id + timestamp + body)`.
 * Controls: `POST /sandbox/push/eventsub/send` {"broadcaster_user_id", "type", "forge"?: true,
 * "age_seconds"?: n (a late message), "message_id"?: reuse an id} sends a notification to the
 * enabled subscriptions; `POST /sandbox/push/eventsub/revoke` {"broadcaster_user_id", "type"?,
 * "reason"?} revokes them (a `revocation` message each).
 */
import { Clock, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { randomUUID } from "node:crypto"
import { eventsubSignature } from "../services/push/PushSignatures.ts"
import type { EventSubSubscription, PushHubStore } from "./PushHubState.ts"
import { PushHubState } from "./PushHubState.ts"
import { sandboxRoute } from "./SandboxRoute.ts"
import { bearer, header, json, query } from "./sources/Http.ts"
import { STREAMING_USERS } from "./sources/Seed.ts"
import type { SourceStore } from "./sources/Store.ts"
import { SourceState } from "./sources/Store.ts"

const TYPES = new Set(["stream.online", "stream.offline"])
const iso = (ms: number) => new Date(ms).toISOString()

const shape = (s: EventSubSubscription) => ({
  id: s.id,
  status: s.status,
  type: s.type,
  version: "1",
  condition: { broadcaster_user_id: s.broadcasterUserId },
  transport: { method: "webhook", callback: s.callback },
  created_at: iso(s.createdAt),
  cost: 0
})

interface Send {
  readonly messageType: "webhook_callback_verification" | "notification" | "revocation"
  readonly body: Record<string, unknown>
  readonly forge?: boolean
  readonly ageSeconds?: number
  readonly messageId?: string
}

/** Signs and posts one message to the subscription's callback. */
const send = (hub: PushHubStore, s: EventSubSubscription, m: Send) =>
  Effect.gen(function*() {
    const id = m.messageId ?? randomUUID()
    const timestamp = iso((yield* Clock.currentTimeMillis) - (m.ageSeconds ?? 0) * 1000)
    const body = JSON.stringify(m.body)
    return yield* hub.call(`eventsub.${m.messageType}`, "POST", s.callback, {
      "content-type": "application/json",
      "twitch-eventsub-message-id": id,
      "twitch-eventsub-message-retry": "0",
      "twitch-eventsub-message-type": m.messageType,
      "twitch-eventsub-message-signature": eventsubSignature(m.forge === true ? "not-the-secret" : s.secret, id, timestamp, body),
      "twitch-eventsub-message-timestamp": timestamp,
      "twitch-eventsub-subscription-type": s.type,
      "twitch-eventsub-subscription-version": "1"
    }, body)
  })

const eventOf = (sources: SourceStore, s: EventSubSubscription) => {
  const user = STREAMING_USERS.find((u) => u.id === s.broadcasterUserId)
  const base = { broadcaster_user_id: s.broadcasterUserId, broadcaster_user_login: user?.login ?? "", broadcaster_user_name: user?.displayName ?? "" }
  const stream = sources.streams.get(s.broadcasterUserId)
  return s.type === "stream.online"
    ? { ...base, id: stream?.id ?? "0", type: "live", started_at: iso(stream?.startedAt ?? 0) }
    : base
}

const readJson = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  const text = yield* req.text.pipe(Effect.orElseSucceed(() => ""))
  try {
    const v = JSON.parse(text === "" ? "{}" : text)
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
})

const bad = (message: string, status = 400) => json({ error: status === 401 ? "Unauthorized" : "Bad Request", status, message }, status)

const create = sandboxRoute("POST", "/sandbox/streaming/helix/eventsub/subscriptions", Effect.gen(function*() {
  if ((yield* header("client-id")) === "" || (yield* bearer) === "") return bad("OAuth token is missing", 401)
  const hub = yield* PushHubState
  const b = yield* readJson
  const type = typeof b?.["type"] === "string" ? b["type"] : ""
  const condition = b?.["condition"] as { broadcaster_user_id?: unknown } | undefined
  const transport = b?.["transport"] as { method?: unknown; callback?: unknown; secret?: unknown } | undefined
  const broadcaster = typeof condition?.broadcaster_user_id === "string" ? condition.broadcaster_user_id : ""
  if (!TYPES.has(type)) return bad("The type is not supported by the sandbox (stream.online, stream.offline).")
  if (!/^\d+$/.test(broadcaster)) return bad("condition.broadcaster_user_id is required.")
  if (transport?.method !== "webhook" || typeof transport.callback !== "string" || !URL.canParse(transport.callback)) return bad("transport.callback is required.")
  if (typeof transport.secret !== "string" || transport.secret.length < 10 || transport.secret.length > 100) return bad("transport.secret must be 10 to 100 characters.")
  const existing = [...hub.eventsub.values()].find((s) =>
    s.type === type && s.broadcasterUserId === broadcaster && s.callback === transport.callback && s.status === "enabled"
  )
  if (existing !== undefined) return json({ error: "Conflict", status: 409, message: "subscription already exists" }, 409)
  const s: EventSubSubscription = {
    id: randomUUID(),
    type,
    broadcasterUserId: broadcaster,
    callback: transport.callback,
    secret: transport.secret,
    status: "webhook_callback_verification_pending",
    createdAt: yield* Clock.currentTimeMillis
  }
  hub.eventsub.set(s.id, s)
  const challenge = `challenge-${hub.next()}-${Math.random().toString(36).slice(2)}`
  yield* Effect.forkDetach(Effect.gen(function*() {
    yield* Effect.sleep("20 millis")
    const d = yield* send(hub, s, { messageType: "webhook_callback_verification", body: { challenge, subscription: shape(s) } })
    s.status = d.status === 200 && d.answer === challenge ? "enabled" : "webhook_callback_verification_failed"
  }))
  return json({ data: [shape(s)], total: hub.eventsub.size, total_cost: 0, max_total_cost: 10_000 }, 202)
}))

const remove = sandboxRoute("DELETE", "/sandbox/streaming/helix/eventsub/subscriptions", Effect.gen(function*() {
  if ((yield* header("client-id")) === "" || (yield* bearer) === "") return bad("OAuth token is missing", 401)
  const hub = yield* PushHubState
  const id = (yield* query).get("id") ?? ""
  return hub.eventsub.delete(id) ? json({}, 204) : json({ error: "Not Found", status: 404, message: "subscription not found" }, 404)
}))

/** The enabled subscriptions a control addresses. */
const addressed = (hub: PushHubStore, b: Record<string, unknown>) =>
  [...hub.eventsub.values()].filter((s) =>
    s.status === "enabled" && s.broadcasterUserId === b["broadcaster_user_id"] && (b["type"] === undefined || s.type === b["type"])
  )

const sendControl = sandboxRoute("POST", "/sandbox/push/eventsub/send", Effect.gen(function*() {
  const hub = yield* PushHubState
  const sources = yield* SourceState
  const b = yield* readJson
  if (b === undefined || typeof b["broadcaster_user_id"] !== "string" || !TYPES.has(String(b["type"]))) {
    return json({ errors: [{ code: "BadRequest", message: "broadcaster_user_id and type (stream.online, stream.offline) are required" }] }, 400)
  }
  const sent = yield* Effect.forEach(addressed(hub, b), (s) =>
    send(hub, s, {
      messageType: "notification",
      body: { subscription: shape(s), event: eventOf(sources, s) },
      forge: b["forge"] === true,
      ...(typeof b["age_seconds"] === "number" ? { ageSeconds: b["age_seconds"] } : {}),
      ...(typeof b["message_id"] === "string" ? { messageId: b["message_id"] } : {})
    }))
  return json({ deliveries: sent.map((d) => ({ index: d.index, status: d.status, message_id: d.headers["twitch-eventsub-message-id"] })) })
}))

const revokeControl = sandboxRoute("POST", "/sandbox/push/eventsub/revoke", Effect.gen(function*() {
  const hub = yield* PushHubState
  const b = yield* readJson
  if (b === undefined || typeof b["broadcaster_user_id"] !== "string") {
    return json({ errors: [{ code: "BadRequest", message: "broadcaster_user_id is required" }] }, 400)
  }
  const reason = b["reason"] === "user_removed" || b["reason"] === "notification_failures_exceeded" ? b["reason"] : "authorization_revoked"
  const sent = yield* Effect.forEach(addressed(hub, b), (s) => {
    s.status = reason
    return send(hub, s, { messageType: "revocation", body: { subscription: shape(s) } })
  })
  return json({ deliveries: sent.map((d) => ({ index: d.index, status: d.status })) })
}))

/** Needs PushHubState, SourceState and SandboxState (PushHub.ts provides the first). */
export const EventSubRoutes = Layer.mergeAll(create, remove, sendControl, revokeControl)
