/**
 * The member player, `POST /sandbox/discord/interactions` (forms-runtime.md §7): builds the
 * interaction as the platform does (PlayerRequest.ts), signs it with the bot's key, POSTs it to the
 * bot's Interactions Endpoint URL and checks the answer as the platform would — within 3 s, a 200
 * with a valid interaction response, or a 202 after the callback route was called —, then answers
 * `{ response, problems, followups?, message_id?, interaction_id, status, elapsed_ms }`. After a
 * deferred answer (5 or 6) it waits up to 3 s for the follow-ups and @original edits (stopping
 * 300 ms after the last one). A `slow` fault on `POST /sandbox/discord/interactions` counts the next
 * answer as arriving 3 s later. A control route: never counted.
 */
import { Clock, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { DiscordState } from "../DiscordState.ts"
import type { DiscordStore } from "../DiscordState.ts"
import { sandboxOrigin } from "../Origin.ts"
import { SandboxState } from "../SandboxRoute.ts"
import { answerProblems } from "./AnswerRules.ts"
import { interactionsUrl, signInteraction } from "./BotKeys.ts"
import { applyAnswer, componentMessageFlags } from "./InteractionWebhook.ts"
import { PlayerBody, prepare } from "./PlayerRequest.ts"
import type { Body, InteractionRecord } from "./State.ts"
import { ANSWER_DEADLINE_MS, interactionsOf, modalKey } from "./State.ts"

export const PLAYER_ROUTE = "POST /sandbox/discord/interactions"
/** How long the player listens past the deadline, to tell a late answer from none. */
const GRACE_MS = 2000
const QUIET_MS = 300

interface Sent {
  readonly status: number
  readonly body: unknown
  readonly elapsedMs: number
}

const send = (url: string, headers: Record<string, string>, raw: string): Effect.Effect<Sent | { readonly error: string }> =>
  Effect.promise(async () => {
    const started = performance.now()
    try {
      const response = await fetch(url, { method: "POST", headers, body: raw, signal: AbortSignal.timeout(ANSWER_DEADLINE_MS + GRACE_MS) })
      const text = await response.text()
      let body: unknown = text
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        // not JSON: reported as such below
      }
      return { status: response.status, body, elapsedMs: Math.round(performance.now() - started) }
    } catch (error) {
      return { error: error instanceof Error && error.name === "TimeoutError" ? "timeout" : String(error) }
    }
  })

/** The platform's verdict on the bot's HTTP answer: the interaction response taken, and what is wrong. */
const judge = (store: DiscordStore, record: InteractionRecord, sent: Sent): { readonly response: Body | undefined; readonly problems: ReadonlyArray<string> } => {
  const late = sent.elapsedMs > ANSWER_DEADLINE_MS
    ? [`answered after 3 s (${sent.elapsedMs} ms): the platform shows "This interaction failed"`]
    : []
  if (sent.status === 202) {
    if (record.callbackBody === undefined) return { response: undefined, problems: [...late, "answered 202 without calling the callback route first"] }
    return { response: record.callbackBody, problems: late }
  }
  if (sent.status !== 200) return { response: undefined, problems: [...late, `answered HTTP ${sent.status}, not 200 with an interaction response`] }
  if (record.callbackType !== undefined) return { response: record.callbackBody, problems: [...late, "answered twice: through the callback route and in the HTTP answer"] }
  const problems = answerProblems(record.type, record.messageId !== undefined, sent.body, componentMessageFlags(store, record))
  const response = typeof sent.body === "object" && sent.body !== null ? (sent.body as Body) : undefined
  return { response, problems: [...late, ...problems] }
}

/** After a deferred answer: the follow-ups and @original edits made within 3 s, each a message body. */
const awaitFollowups = (record: InteractionRecord) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    let count = 0
    let lastChange = start
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (record.events.length !== count) {
        count = record.events.length
        lastChange = now
      }
      if (now - start >= ANSWER_DEADLINE_MS || (count > 0 && now - lastChange >= QUIET_MS)) break
      yield* Effect.sleep("25 millis")
    }
    return record.events.flatMap((e) => (e.body !== undefined ? [e.body] : []))
  })

/** The newest ephemeral message the answer or a follow-up made for the member. */
const ephemeralId = (store: DiscordStore, record: InteractionRecord): string | undefined =>
  [...interactionsOf(store).messages.values()].filter((m) => m.interactionId === record.id && m.ephemeralFor !== undefined).at(-1)?.id

const badRequest = (message: string) => HttpServerResponse.jsonUnsafe({ message, code: 50035 }, { status: 400 })

export const PlayerRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const store = yield* DiscordState
    const faults = yield* SandboxState
    yield* router.add("POST", "/sandbox/discord/interactions", () =>
      Effect.gen(function*() {
        const decoded = yield* HttpServerRequest.schemaBodyJson(PlayerBody).pipe(Effect.result)
        if (decoded._tag === "Failure") return badRequest(`Invalid player request: ${String(decoded.failure)}`)
        const body = decoded.success
        const origin = yield* sandboxOrigin(store.config.publicOrigin)
        const now = yield* Clock.currentTimeMillis
        const prepared = prepare(store, body, now, origin)
        if (!prepared.ok) return badRequest(prepared.message)
        const { payload, record } = prepared
        const state = interactionsOf(store)
        state.byToken.set(record.token, record)
        state.byId.set(record.id, record)
        const raw = JSON.stringify(payload)
        const timestamp = String(Math.floor(now / 1000) + Math.trunc(body.timestamp_offset_s ?? 0))
        const headers = {
          "content-type": "application/json",
          "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
          "x-signature-ed25519": signInteraction(record.botId, timestamp, raw),
          "x-signature-timestamp": timestamp
        }
        const url = interactionsUrl(store.config.interactionsOrigin ?? origin, record.botId)
        const sent = yield* send(url, headers, raw)
        const base = { interaction_id: record.id }
        if ("error" in sent) {
          record.invalid = true
          const problem = sent.error === "timeout" ? "no answer within 3 s" : `could not reach ${url}: ${sent.error}`
          return HttpServerResponse.jsonUnsafe({ ...base, response: null, problems: [problem], status: null, elapsed_ms: null })
        }
        const slow = yield* faults.takeFault(PLAYER_ROUTE, "/sandbox/discord/interactions")
        const measured = slow?.kind === "slow" ? { ...sent, elapsedMs: sent.elapsedMs + ANSWER_DEADLINE_MS } : sent
        const verdict = judge(store, record, measured)
        const answered = { ...base, response: verdict.response ?? null, status: sent.status, elapsed_ms: measured.elapsedMs }
        if (verdict.problems.length > 0) {
          // The platform drops a late or invalid answer: the token dies, nothing the answer would do happens.
          record.invalid = true
          return HttpServerResponse.jsonUnsafe({ ...answered, problems: verdict.problems })
        }
        if (record.callbackType === undefined && verdict.response !== undefined) {
          applyAnswer(store, record, verdict.response, yield* Clock.currentTimeMillis)
        }
        // A modal answered without problems is closed on the member's screen.
        if (record.type === 5) state.modals.delete(modalKey(record.botId, record.userId))
        const followups = record.callbackType === 5 || record.callbackType === 6 ? yield* awaitFollowups(record) : undefined
        const messageId = ephemeralId(store, record)
        return HttpServerResponse.jsonUnsafe({
          ...answered,
          problems: [],
          ...(followups !== undefined ? { followups } : {}),
          ...(messageId !== undefined ? { message_id: messageId } : {})
        })
      }))
  })
)
