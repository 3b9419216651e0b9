/**
 * In-memory push hubs, held to the contract of the live client against the sandbox's twins
 * (test/contracts/PushHubs.contract.ts): the WebSub hub accepts a (un)subscribe whose callback is
 * an http(s) URL and whose topic is a YouTube channel feed, else refuses it with 400; EventSub
 * creates a subscription (a new id) for a numeric broadcaster, a callback URL and a secret of 10 to
 * 100 characters, else 400, and deletes one by id (an unknown id is not an error). Nothing calls a
 * callback back: subscriptions are never verified here (the live hub verifies them at the
 * callback), so there is no "already exists" refusal. `PushHubsMemoryState` shows what was asked.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { PushHubError, PushHubs } from "../../src/services/push/PushHubs.ts"
import type { EventSubRequest, WebSubRequest } from "../../src/services/push/PushHubs.ts"

export class PushHubsMemoryState extends Context.Service<PushHubsMemoryState, {
  /** Every (un)subscribe the WebSub hub accepted, in order. */
  readonly websub: ReadonlyArray<WebSubRequest>
  /** The EventSub subscriptions held, by id. */
  readonly eventsub: ReadonlyMap<string, EventSubRequest>
}>()("test/PushHubsMemoryState") {}

const channelOf = (topic: string) => URL.canParse(topic) ? new URL(topic).searchParams.get("channel_id") ?? "" : ""
const isHttpUrl = (url: string) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)

/** Which hubs the deployment has (both unless said). */
export const PushHubsMemory = (options: { readonly websub?: boolean; readonly eventsub?: boolean } = {}) =>
  Layer.unwrap(Effect.sync(() => {
    const websub: Array<WebSubRequest> = []
    const eventsub = new Map<string, EventSubRequest>()

    const hubs = PushHubs.of({
      websub: options.websub === false ? Option.none() : Option.some({
        request: (r: WebSubRequest) =>
          Effect.suspend(() =>
            !isHttpUrl(r.callback) || channelOf(r.topic) === ""
              ? Effect.fail(new PushHubError({ message: `The WebSub hub refused the ${r.mode} (400).`, status: 400 }))
              : Effect.sync(() => void websub.push({ ...r, secret: Redacted.make(Redacted.value(r.secret)) }))
          )
      }),
      eventsub: options.eventsub === false ? Option.none() : Option.some({
        create: (r: EventSubRequest) =>
          Effect.suspend(() => {
            const secret = Redacted.value(r.secret)
            if (!/^\d+$/.test(r.broadcasterUserId) || !URL.canParse(r.callback) || secret.length < 10 || secret.length > 100) {
              return Effect.fail(new PushHubError({ message: `Twitch EventSub refused the ${r.type} subscription (400).`, status: 400 }))
            }
            const id = randomUUID()
            eventsub.set(id, r)
            return Effect.succeed(id)
          }),
        remove: (id: string) => Effect.sync(() => void eventsub.delete(id))
      })
    })

    return Layer.mergeAll(
      Layer.succeed(PushHubs, hubs),
      Layer.succeed(PushHubsMemoryState, PushHubsMemoryState.of({ websub, eventsub }))
    )
  }))
