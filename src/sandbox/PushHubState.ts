/**
 * What the sandbox's push twins hold for one build (src/sandbox/PushHub.ts, PushEventSub.ts): the
 * WebSub subscriptions the hub verified, the EventSub subscriptions, and every request the twins
 * sent to a callback (method, URL, headers, body, the answer's status), so a test can replay one
 * byte for byte. Callbacks are called with `fetch`, as the platforms would over the network.
 */
import { Context, Effect, Layer } from "effect"

export interface WebSubSubscription {
  readonly topic: string
  readonly callback: string
  readonly secret: string | undefined
  readonly leaseSeconds: number
  readonly expiresAt: number
}

export interface EventSubSubscription {
  readonly id: string
  readonly type: string
  readonly broadcasterUserId: string
  readonly callback: string
  readonly secret: string
  status: "webhook_callback_verification_pending" | "enabled" | "webhook_callback_verification_failed" | "authorization_revoked" | "user_removed" | "notification_failures_exceeded"
  readonly createdAt: number
}

export interface Delivery {
  readonly index: number
  readonly kind: string
  readonly method: "GET" | "POST"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
  readonly status: number
  readonly answer: string
}

export class PushHubStore {
  /** WebSub, by `callback topic`. */
  readonly websub = new Map<string, WebSubSubscription>()
  /** Subscribe requests received, by topic (renewals count). */
  readonly subscribeRequests = new Map<string, number>()
  readonly eventsub = new Map<string, EventSubSubscription>()
  readonly deliveries: Array<Delivery> = []
  private sequence = 0

  next(): number {
    this.sequence += 1
    return this.sequence
  }

  /** Sends a request to a callback and records it with its answer (status 0: unreachable). */
  call(kind: string, method: "GET" | "POST", url: string, headers: Record<string, string>, body?: string): Effect.Effect<Delivery> {
    return Effect.promise(async () => {
      let status = 0
      let answer = ""
      try {
        const res = await fetch(url, { method, headers: { "user-agent": "sandbox-push-hub/1.0", ...headers }, ...(body === undefined ? {} : { body }) })
        status = res.status
        answer = await res.text()
      } catch (e) {
        answer = e instanceof Error ? e.message : "unreachable"
      }
      const d: Delivery = { index: this.deliveries.length, kind, method, url, headers, body, status, answer }
      this.deliveries.push(d)
      return d
    })
  }
}

export class PushHubState extends Context.Service<PushHubState, PushHubStore>()("gateway/SandboxPushHubState") {
  static readonly layer = Layer.sync(PushHubState, () => new PushHubStore())
}
