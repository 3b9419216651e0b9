/**
 * What the insight tests do as a user: the gateway with its worker (ROLE=all) on a real database,
 * polling only when asked (the interval is a month: the first poll of a new source, a refresh),
 * requests to the insight routes, events published at the sandbox sources and the sandbox's
 * webhook inbox.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOT2_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import type { DbKind } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { eventually } from "../utils/Eventually.ts"

export const appLayer = (db: DbKind) =>
  TestApp.layer({
    capabilities: { db },
    config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 30 * 86_400 } }
  })

export const modulePath = (m: string, bot = BOT2_ID, server = S1_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/${m}`

export interface InboxMessage {
  readonly id: string
  readonly webhook_id: string
  readonly channel_id: string
  readonly body: Record<string, unknown>
  readonly at: string
}

/** A request to the sandbox (not the gateway's API): JSON in, JSON out. */
export const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", "user-agent": "insight-test" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

export const publish = (module: string, identifier: string, event: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* sandbox("POST", `/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`, event)
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { readonly id: string; readonly url: string }
  })

export const inbox = Effect.map(sandbox("GET", "/sandbox/discord/messages"), (r) => (r.body as { messages: Array<InboxMessage> }).messages)

/** A request to the gateway as `user` (Alice by default): status, headers and JSON body. */
export const call = (method: string, path: string, options: { readonly body?: unknown; readonly user?: string } = {}) =>
  Effect.gen(function*() {
    const res = yield* raw({
      method,
      token: yield* tokenOf(options.user ?? ALICE_ID),
      ...(options.body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(options.body) })
    }, path)
    return { status: res.status, headers: res.headers, body: yield* json(res) }
  })

export const createFeed = (m: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* call("POST", `${modulePath(m)}/feeds`, { body })
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body as { readonly id: string }
  })

export { eventually }

/**
 * The feed's first poll (the baseline) is done; then one more second (feed dates have whole
 * seconds: an item of the creation's own second counts as from before it).
 */
export const baselined = (m: string, id: string) =>
  eventually(
    Effect.map(call("GET", `${modulePath(m)}/feeds/${id}/status`), (r) => r.body),
    (s) => s.last_poll_at !== null,
    `${m} feed ${id}: the first poll`
  ).pipe(Effect.andThen(Effect.sleep("1 second")))

/** What the webhook got, as the preview shows a message (an omitted name or avatar: null). */
export const asPreviewMessage = (body: Record<string, unknown>) => ({
  content: body["content"],
  username: body["username"] ?? null,
  avatar_url: body["avatar_url"] ?? null,
  allowed_mentions: body["allowed_mentions"]
})
