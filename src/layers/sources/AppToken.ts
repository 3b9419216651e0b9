/**
 * An app access token (OAuth client credentials) kept until shortly before it expires; one fetch at
 * a time, and `withToken` fetches a fresh one once when the upstream answers 401 with a cached one.
 */
import { Clock, Effect, Option, Ref, Schema, Semaphore } from "effect"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { type Answer, decode, unavailable, type Upstream } from "./Upstream.ts"

export interface Token {
  readonly accessToken: string
  readonly expiresInSeconds: number
}

type Failure = RequestTimeout | ServiceUnavailable

/** `fetch` gets a new token; `use` sends a request with one and answers (a 401 must be returned, not failed). */
export const makeAppToken = (fetch: Effect.Effect<Token, Failure>) =>
  Effect.gen(function*() {
    const cached = yield* Ref.make(Option.none<{ readonly token: string; readonly until: number }>())
    const lock = yield* Semaphore.make(1)

    const fresh = Effect.gen(function*() {
      const token = yield* fetch
      const now = yield* Clock.currentTimeMillis
      // Renew a minute early so a request never carries a token that expires on the way.
      const until = now + Math.max(0, token.expiresInSeconds - 60) * 1000
      yield* Ref.set(cached, Option.some({ token: token.accessToken, until }))
      return token.accessToken
    })

    const current = lock.withPermit(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const c = yield* Ref.get(cached)
      return Option.isSome(c) && c.value.until > now ? c.value.token : yield* fresh
    }))

    const withToken = <E>(use: (token: string) => Effect.Effect<Answer, E>): Effect.Effect<Answer, E | Failure> =>
      current.pipe(
        Effect.flatMap(use),
        Effect.flatMap((answer) =>
          answer.status === 401
            ? Ref.set(cached, Option.none()).pipe(Effect.andThen(current), Effect.flatMap(use))
            : Effect.succeed(answer)
        )
      )

    return { withToken }
  })

const TokenBody = Schema.Struct({ access_token: Schema.String, expires_in: Schema.Number })

/** An OAuth client-credentials answer (Reddit, Twitch): the token, or the source refusing to issue one. */
export const readAppToken = (u: Upstream, a: Answer) =>
  a.status === 200
    ? decode(u, TokenBody)(a.body).pipe(Effect.map((t): Token => ({ accessToken: t.access_token, expiresInSeconds: t.expires_in })))
    : Effect.fail(unavailable(u, `refused to issue an app token (${a.status})`))
