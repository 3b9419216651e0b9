/**
 * The sandbox's WebSub hub (YouTube's is https://pubsubhubbub.appspot.com), at
 * `POST /sandbox/push/websub/hub` with the `hub.*` form:
 * - `subscribe` / `unsubscribe`: 202, then the verification of intent at the callback (GET with
 *   `hub.mode`, `hub.topic`, `hub.challenge`, `hub.lease_seconds`); the subscription holds only
 *   if the callback echoes the challenge. The lease granted is the one asked for (at most 10
 *   days); it ends on time unless renewed.
 * - `publish` (`hub.url` = a topic): every verified, unexpired subscriber of the topic gets the
 *   channel's newest upload as Atom, signed `X-Hub-Signature: sha1=HMAC(secret, body)`.
 * Controls for tests and the README: `POST /sandbox/push/websub/publish` {"channel_id",
 * "forge"?: true (signed with a wrong secret), "unsigned"?: true}; `POST /sandbox/push/replay`
 * {"index"?} resends a delivery exactly as it went (default: the last notification);
 * `GET /sandbox/push` lists subscriptions (with their callbacks) and deliveries (secrets left out).
 */
import { Clock, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { youtubeTopic } from "../services/push/PushHubs.ts"
import { websubSignature } from "../services/push/PushSignatures.ts"
import { EventSubRoutes } from "./PushEventSub.ts"
import { PushHubState } from "./PushHubState.ts"
import type { PushHubStore } from "./PushHubState.ts"
import { sandboxRoute } from "./SandboxRoute.ts"
import { formOrQuery, json } from "./sources/Http.ts"
import type { SourceStore } from "./sources/Store.ts"
import { SourceState } from "./sources/Store.ts"

const MAX_LEASE_SECONDS = 10 * 86_400
const withQuery = (url: string, params: Record<string, string>) => `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams(params)}`
const channelOf = (topic: string) => URL.canParse(topic) ? new URL(topic).searchParams.get("channel_id") ?? "" : ""

/** The Atom document YouTube's hub sends: the channel's newest upload. */
const atom = (sources: SourceStore, channelId: string, now: number) => {
  const video = sources.videos.get(channelId)?.at(-1)
  const entry = video === undefined ? "" : `<entry><id>yt:video:${video.id}</id><yt:videoId>${video.id}</yt:videoId>` +
    `<yt:channelId>${channelId}</yt:channelId><title>${video.title.replace(/[<&]/g, (c) => (c === "<" ? "&lt;" : "&amp;"))}</title>` +
    `<link rel="alternate" href="https://www.youtube.com/watch?v=${video.id}"/>` +
    `<published>${new Date(video.publishedAt).toISOString()}</published><updated>${new Date(now).toISOString()}</updated></entry>`
  return `<?xml version="1.0" encoding="UTF-8"?><feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns="http://www.w3.org/2005/Atom">` +
    `<link rel="hub" href="https://pubsubhubbub.appspot.com"/><link rel="self" href="${youtubeTopic(channelId)}"/>` +
    `<title>YouTube video feed</title><updated>${new Date(now).toISOString()}</updated>${entry}</feed>`
}

/** The verification of intent, then the subscription's change if the callback echoed the challenge. */
const verify = (hub: PushHubStore, mode: "subscribe" | "unsubscribe", topic: string, callback: string, secret: string | undefined, lease: number) =>
  Effect.gen(function*() {
    const challenge = `challenge-${hub.next()}-${Math.random().toString(36).slice(2)}`
    const d = yield* hub.call("websub.verify", "GET", withQuery(callback, {
      "hub.mode": mode,
      "hub.topic": topic,
      "hub.challenge": challenge,
      "hub.lease_seconds": String(lease)
    }), {})
    if (d.status < 200 || d.status > 299 || d.answer !== challenge) return
    const key = `${callback} ${topic}`
    if (mode === "unsubscribe") hub.websub.delete(key)
    else hub.websub.set(key, { topic, callback, secret, leaseSeconds: lease, expiresAt: (yield* Clock.currentTimeMillis) + lease * 1000 })
  })

/** Notifies the topic's live subscribers: the deliveries. */
export const publishTopic = (hub: PushHubStore, sources: SourceStore, topic: string, tamper: "forge" | "unsigned" | undefined) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const body = atom(sources, channelOf(topic), now)
    const subscribers = [...hub.websub.values()].filter((s) => s.topic === topic && s.expiresAt > now)
    return yield* Effect.forEach(subscribers, (s) => {
      const headers: Record<string, string> = { "content-type": "application/atom+xml" }
      if (s.secret !== undefined && tamper !== "unsigned") headers["x-hub-signature"] = websubSignature(tamper === "forge" ? "not-the-secret" : s.secret, body)
      return hub.call("websub.notification", "POST", s.callback, headers, body)
    })
  })

const hubRoute = sandboxRoute("POST", "/sandbox/push/websub/hub", Effect.gen(function*() {
  const hub = yield* PushHubState
  const sources = yield* SourceState
  const form = yield* formOrQuery
  const mode = form.get("hub.mode") ?? ""
  const topic = form.get("hub.topic") ?? form.get("hub.url") ?? ""
  if (mode === "publish") {
    yield* Effect.forkDetach(publishTopic(hub, sources, topic, undefined))
    return json({}, 204)
  }
  const callback = form.get("hub.callback") ?? ""
  if (mode !== "subscribe" && mode !== "unsubscribe") return json({ error: "hub.mode must be subscribe, unsubscribe or publish" }, 400)
  if (!URL.canParse(callback) || !/^https?:$/.test(new URL(callback).protocol)) return json({ error: "hub.callback must be an http(s) URL" }, 400)
  if (channelOf(topic) === "") return json({ error: "hub.topic must be a YouTube channel feed" }, 400)
  const asked = Number(form.get("hub.lease_seconds") ?? MAX_LEASE_SECONDS)
  const lease = Number.isInteger(asked) && asked > 0 ? Math.min(asked, MAX_LEASE_SECONDS) : MAX_LEASE_SECONDS
  if (mode === "subscribe") hub.subscribeRequests.set(topic, (hub.subscribeRequests.get(topic) ?? 0) + 1)
  const secret = form.get("hub.secret") ?? undefined
  // As the real hub: accepted now, verified right after (asynchronously).
  yield* Effect.forkDetach(Effect.andThen(Effect.sleep("20 millis"), verify(hub, mode, topic, callback, secret, lease)))
  return json({}, 202)
}))

const Tamper = (body: Record<string, unknown>) => (body["forge"] === true ? "forge" : body["unsigned"] === true ? "unsigned" : undefined)

const readJson = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  const text = yield* req.text.pipe(Effect.orElseSucceed(() => ""))
  try {
    const v = JSON.parse(text === "" ? "{}" : text)
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
  } catch {
    return {}
  }
})

const publishRoute = sandboxRoute("POST", "/sandbox/push/websub/publish", Effect.gen(function*() {
  const hub = yield* PushHubState
  const sources = yield* SourceState
  const body = yield* readJson
  const channel = typeof body["channel_id"] === "string" ? body["channel_id"] : ""
  if (channel === "") return json({ errors: [{ code: "BadRequest", message: "channel_id is required" }] }, 400)
  const sent = yield* publishTopic(hub, sources, youtubeTopic(channel), Tamper(body))
  return json({ deliveries: sent.map((d) => ({ index: d.index, status: d.status })) })
}))

const replayRoute = sandboxRoute("POST", "/sandbox/push/replay", Effect.gen(function*() {
  const hub = yield* PushHubState
  const body = yield* readJson
  const index = typeof body["index"] === "number" ? body["index"] : hub.deliveries.findLastIndex((d) => d.kind.endsWith("notification"))
  const d = hub.deliveries[index]
  if (d === undefined) return json({ errors: [{ code: "NotFound", message: "no such delivery" }] }, 404)
  const again = yield* hub.call(`${d.kind}.replay`, d.method, d.url, { ...d.headers }, d.body)
  return json({ index: again.index, status: again.status, answer: again.answer })
}))

const stateRoute = sandboxRoute("GET", "/sandbox/push", Effect.gen(function*() {
  const hub = yield* PushHubState
  return json({
    websub: [...hub.websub.values()].map((s) => ({ topic: s.topic, callback: s.callback, lease_seconds: s.leaseSeconds, expires_at: new Date(s.expiresAt).toISOString() })),
    subscribe_requests: Object.fromEntries(hub.subscribeRequests),
    eventsub: [...hub.eventsub.values()].map((s) => ({ id: s.id, type: s.type, status: s.status, broadcaster_user_id: s.broadcasterUserId, callback: s.callback })),
    deliveries: hub.deliveries.map((d) => ({ index: d.index, kind: d.kind, method: d.method, status: d.status }))
  })
}))

/** Every push twin route, with the hub's state of the build (needs SourceState and SandboxState, as the source twins). */
export const PushHubRoutes = Layer.mergeAll(
  hubRoute,
  publishRoute,
  replayRoute,
  stateRoute,
  EventSubRoutes
).pipe(Layer.provide(PushHubState.layer))
