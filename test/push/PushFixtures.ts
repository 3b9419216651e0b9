/**
 * What the push tests do: the gateway with its worker on a real database, push switched on
 * explicitly (PUSH=on: PUBLIC_URL is the test's http loopback URL, which `auto` would refuse), its
 * sweep every second, and the sandbox playing the WebSub hub and Twitch EventSub.
 */
import { Effect } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import type { DeliveryConfig } from "../../src/layers/config/AppConfig.ts"
import type { DbKind } from "../utils/Db.ts"
import { raw, TestApp } from "../utils/TestApp.ts"
import { inbox, sandbox } from "../insight/InsightFixtures.ts"

export const pushApp = (db: DbKind, delivery: Partial<DeliveryConfig>, leaseSeconds = 432_000) =>
  TestApp.layer({
    capabilities: { db },
    config: {
      delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 30 * 86_400, ...delivery },
      push: { mode: "on", leaseSeconds, sweepSeconds: 1, websubHubUrl: undefined }
    }
  })

export interface HubState {
  readonly websub: ReadonlyArray<{ topic: string; callback: string; lease_seconds: number; expires_at: string }>
  readonly subscribe_requests: Record<string, number>
  readonly eventsub: ReadonlyArray<{ id: string; type: string; status: string; broadcaster_user_id: string; callback: string }>
  readonly deliveries: ReadonlyArray<{ index: number; kind: string; method: string; status: number }>
}

export const hubState = Effect.map(sandbox("GET", "/sandbox/push"), (r) => r.body as HubState)

/** The statuses the gateway answered to what a control sent. */
export const statuses = (r: { readonly body: unknown }) => (r.body as { deliveries: Array<{ status: number }> }).deliveries.map((d) => d.status)

/** Messages posted to the webhook inbox whose content mentions `text`. */
export const postedWith = (text: string) =>
  Effect.map(inbox, (ms) => ms.filter((m) => JSON.stringify(m.body).includes(text)))

/** A raw request to the gateway (no token): status, content type, text. */
export const hook = (method: string, path: string, init: { readonly headers?: Record<string, string>; readonly body?: string } = {}) =>
  Effect.gen(function*() {
    const res = yield* raw({ method, ...(init.headers === undefined ? {} : { headers: init.headers }), ...(init.body === undefined ? {} : { body: init.body }) }, path)
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: yield* Effect.promise(() => res.text()) }
  })

export const secondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString()
