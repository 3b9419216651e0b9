/**
 * PushHubs over HTTP: the WebSub hub (`POST hub` with the `hub.*` form: 202 or 204 is accepted)
 * and Twitch EventSub (`POST /helix/eventsub/subscriptions`, `DELETE …?id=`) with an app token
 * from the streaming credentials (client credentials, kept until a minute before it expires,
 * asked again once on a 401). Secrets go only into the request bodies, never into a log line or
 * an error message.
 */
import { Clock, Duration, Effect, Layer, Option, Redacted, Ref, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { PushHubError, PushHubs } from "../../services/push/PushHubs.ts"
import type { EventSubRequest, WebSubRequest } from "../../services/push/PushHubs.ts"
import { join } from "../sources/Upstream.ts"

export interface PushHubsOptions {
  /** The WebSub hub's URL; undefined: no WebSub. */
  readonly websubHub?: string | undefined
  /** Twitch's credentials and URLs (as the streaming source's); undefined: no EventSub. */
  readonly twitch?: {
    readonly clientId: string
    readonly clientSecret: Redacted.Redacted<string>
    readonly apiUrl?: string | undefined
    readonly authUrl?: string | undefined
  } | undefined
  readonly timeout?: Duration.Input
}

const TokenBody = Schema.Struct({ access_token: Schema.String, expires_in: Schema.Number })
const Created = Schema.Struct({ data: Schema.NonEmptyArray(Schema.Struct({ id: Schema.String })) })

const unreachable = (what: string) => (e: unknown) =>
  new PushHubError({ message: `${what} could not be reached: ${e instanceof Error ? e.message.split("\n")[0] : "no answer"}` })

export const PushHubsHttp = (options: PushHubsOptions) =>
  Layer.effect(PushHubs, Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const timeout = options.timeout ?? Duration.seconds(10)
    const run = (what: string, request: HttpClientRequest.HttpClientRequest) =>
      client.execute(request).pipe(
        Effect.flatMap((res) => Effect.map(Effect.orElseSucceed(res.text, () => ""), (text) => ({ status: res.status, text }))),
        Effect.timeout(timeout),
        Effect.mapError(unreachable(what))
      )

    const websub = Option.fromNullishOr(options.websubHub).pipe(Option.map((hub) => ({
      request: (r: WebSubRequest) =>
        run("The WebSub hub", HttpClientRequest.post(hub).pipe(HttpClientRequest.bodyUrlParams({
          "hub.mode": r.mode,
          "hub.topic": r.topic,
          "hub.callback": r.callback,
          "hub.secret": Redacted.value(r.secret),
          "hub.lease_seconds": String(r.leaseSeconds),
          "hub.verify": "async"
        }))).pipe(Effect.flatMap((a) =>
          a.status === 202 || a.status === 204
            ? Effect.void
            : Effect.fail(new PushHubError({ message: `The WebSub hub refused the ${r.mode} (${a.status}).`, status: a.status }))
        ))
    })))

    const eventsub = yield* Effect.gen(function*() {
      const twitch = options.twitch
      if (twitch === undefined) return Option.none()
      const apiUrl = twitch.apiUrl ?? "https://api.twitch.tv"
      const authUrl = twitch.authUrl ?? "https://id.twitch.tv"
      const cached = yield* Ref.make<{ readonly token: string; readonly until: number } | undefined>(undefined)
      const fresh = Effect.gen(function*() {
        const a = yield* run("Twitch", HttpClientRequest.post(join(authUrl, "/oauth2/token")).pipe(HttpClientRequest.bodyUrlParams({
          client_id: twitch.clientId,
          client_secret: Redacted.value(twitch.clientSecret),
          grant_type: "client_credentials"
        })))
        if (a.status !== 200) return yield* new PushHubError({ message: `Twitch refused an app token (${a.status}); check its client id and secret.`, status: a.status })
        const body = yield* Effect.try({ try: () => Schema.decodeUnknownSync(TokenBody)(JSON.parse(a.text)), catch: () => new PushHubError({ message: "Twitch answered an unreadable token." }) })
        const now = yield* Clock.currentTimeMillis
        yield* Ref.set(cached, { token: body.access_token, until: now + (body.expires_in - 60) * 1000 })
        return body.access_token
      })
      const token = (renew: boolean) =>
        Effect.gen(function*() {
          const c = yield* Ref.get(cached)
          return !renew && c !== undefined && c.until > (yield* Clock.currentTimeMillis) ? c.token : yield* fresh
        })
      /** The request with the app token; once more with a new token after a 401. */
      const authed = (build: (token: string) => HttpClientRequest.HttpClientRequest) =>
        Effect.flatMap(token(false), (t) => run("Twitch EventSub", build(t))).pipe(
          Effect.flatMap((a) => a.status === 401 ? Effect.flatMap(token(true), (t) => run("Twitch EventSub", build(t))) : Effect.succeed(a))
        )
      const url = join(apiUrl, "/helix/eventsub/subscriptions")
      const headers = (t: string) => HttpClientRequest.setHeaders({ "client-id": twitch.clientId, authorization: `Bearer ${t}` })
      return Option.some({
        create: (r: EventSubRequest) =>
          authed((t) =>
            HttpClientRequest.post(url).pipe(headers(t), HttpClientRequest.bodyJsonUnsafe({
              type: r.type,
              version: "1",
              condition: { broadcaster_user_id: r.broadcasterUserId },
              transport: { method: "webhook", callback: r.callback, secret: Redacted.value(r.secret) }
            }))
          ).pipe(Effect.flatMap((a) =>
            a.status === 202
              ? Effect.try({
                try: () => Schema.decodeUnknownSync(Created)(JSON.parse(a.text)).data[0].id,
                catch: () => new PushHubError({ message: "Twitch EventSub answered an unreadable subscription." })
              })
              : Effect.fail(new PushHubError({ message: `Twitch EventSub refused the ${r.type} subscription (${a.status}).`, status: a.status }))
          )),
        remove: (id: string) =>
          authed((t) => HttpClientRequest.delete(url, { urlParams: { id } }).pipe(headers(t))).pipe(Effect.flatMap((a) =>
            a.status === 204 || a.status === 404
              ? Effect.void
              : Effect.fail(new PushHubError({ message: `Twitch EventSub refused to delete a subscription (${a.status}).`, status: a.status }))
          ))
      })
    })

    return PushHubs.of({ websub, eventsub })
  }))

