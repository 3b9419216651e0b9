/**
 * The microblog source: X API v2 with an app bearer token. `/2/users/by/username/:u` and
 * `/2/users/:id`; X answers an unknown user with 200 and an `errors` array, a malformed one with 400.
 * A numeric input is tried as an id first, then as a user name (user names may be all digits).
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { NotFound } from "../../domain/infra/Errors.ts"
import type { ExternalUser } from "../../services/sources/ExternalSources.ts"
import { decode, type Failure, get, send, unavailable, type Upstream } from "./Upstream.ts"

export interface MicroblogOptions {
  readonly bearerToken: Redacted.Redacted<string>
  /** Default `https://api.x.com` (paths `/2/users/...`). */
  readonly baseUrl?: string | undefined
}

const UserBody = Schema.Struct({
  data: Schema.optionalKey(Schema.Struct({ id: Schema.String, name: Schema.String, username: Schema.String }))
})

const USERNAME = /^[A-Za-z0-9_]{1,15}$/
const NUMERIC = /^\d{1,20}$/

export const makeMicroblog = (u: Upstream, options: MicroblogOptions) => {
  const baseUrl = options.baseUrl ?? "https://api.x.com"

  /** The user at `path`, or undefined when X says there is none. */
  const user = (path: string): Effect.Effect<ExternalUser | undefined, Failure> =>
    send(u, get(baseUrl, path).pipe(HttpClientRequest.bearerToken(options.bearerToken))).pipe(
      Effect.flatMap((a) => {
        if (a.status === 400 || a.status === 404) return Effect.succeed(undefined)
        if (a.status !== 200) return Effect.fail(unavailable(u, `refused the request (${a.status})`))
        return decode(u, UserBody)(a.body).pipe(
          Effect.map(({ data }) =>
            data === undefined ? undefined : {
              id: data.id,
              userName: data.username,
              displayName: data.name,
              url: `https://x.com/${data.username}`
            }
          )
        )
      })
    )

  const lookupUser = (nameOrId: string): Effect.Effect<ExternalUser, NotFound | Failure> => {
    const input = nameOrId.trim().replace(/^@/, "")
    const byName = USERNAME.test(input)
      ? user(`/2/users/by/username/${encodeURIComponent(input)}`)
      : Effect.succeed(undefined)
    const found = NUMERIC.test(input)
      ? user(`/2/users/${input}`).pipe(Effect.flatMap((byId) => byId === undefined ? byName : Effect.succeed(byId)))
      : byName
    return found.pipe(
      Effect.flatMap((user) => user === undefined ? Effect.fail(NotFound.of(`No microblog user "${nameOrId}".`)) : Effect.succeed(user)),
      Effect.withSpan("ExternalSources.microblog.lookupUser")
    )
  }

  return { lookupUser }
}
