/**
 * The photo source: Instagram Graph API with the gateway's own professional account
 * (INSTAGRAM_USER_ID) and its access token. A user name goes through business discovery
 * (`/{ig-user-id}?fields=business_discovery.username(name){id,username,name}`), which only finds
 * professional (business or creator) accounts; a numeric input is first read as an IG user id
 * (`/{id}?fields=id,username,name`, which Graph answers only for accounts the token may read).
 * Graph errors: code 100/110 (unknown or unsupported node) → not found; 190/102/104 (token) → 503.
 */
import { Effect, Redacted, Schema } from "effect"
import { NotFound } from "../../domain/infra/Errors.ts"
import type { ExternalUser } from "../../services/sources/ExternalSources.ts"
import { decode, type Failure, get, send, unavailable, type Upstream } from "./Upstream.ts"

export interface PhotoOptions {
  readonly accessToken: Redacted.Redacted<string>
  /** The gateway's own Instagram professional account id. */
  readonly userId: string
  /** Default `https://graph.facebook.com/v21.0`. */
  readonly baseUrl?: string | undefined
}

const IgUser = Schema.Struct({ id: Schema.String, username: Schema.String, name: Schema.optionalKey(Schema.String) })
const Discovery = Schema.Struct({ business_discovery: Schema.optionalKey(IgUser) })
const GraphError = Schema.Struct({ error: Schema.Struct({ code: Schema.optionalKey(Schema.Number) }) })
const graphCode = Schema.decodeUnknownOption(GraphError)

const USERNAME = /^[A-Za-z0-9._]{1,30}$/
const NUMERIC = /^\d{1,25}$/

export const makePhoto = (u: Upstream, options: PhotoOptions) => {
  const baseUrl = options.baseUrl ?? "https://graph.facebook.com/v21.0"

  const node = <S extends typeof IgUser | typeof Discovery>(schema: S, id: string, fields: string) =>
    send(u, get(baseUrl, `/${encodeURIComponent(id)}`, { urlParams: { fields, access_token: options.accessToken } })).pipe(
      Effect.flatMap((a): Effect.Effect<S["Type"] | undefined, Failure> => {
        if (a.status === 200) return decode(u, schema)(a.body)
        const code = graphCode(a.body)
        const c = code._tag === "Some" ? code.value.error.code : undefined
        if (c === 100 || c === 110 || a.status === 404) return Effect.succeed(undefined)
        return Effect.fail(unavailable(u, c === 190 || c === 102 || c === 104
          ? "refused the gateway's credentials"
          : `refused the request (${a.status}${c === undefined ? "" : `, code ${c}`})`))
      })
    )

  const toUser = (user: typeof IgUser.Type): ExternalUser => ({
    id: user.id,
    userName: user.username,
    displayName: user.name !== undefined && user.name.length > 0 ? user.name : user.username,
    url: `https://www.instagram.com/${user.username}/`
  })

  const byName = (name: string): Effect.Effect<ExternalUser | undefined, Failure> =>
    USERNAME.test(name)
      ? node(Discovery, options.userId, `business_discovery.username(${name}){id,username,name}`).pipe(
        Effect.map((d) => d?.business_discovery === undefined ? undefined : toUser(d.business_discovery))
      )
      : Effect.succeed(undefined)

  const lookupUser = (nameOrId: string): Effect.Effect<ExternalUser, NotFound | Failure> => {
    const input = nameOrId.trim().replace(/^@/, "")
    const found = NUMERIC.test(input)
      ? node(IgUser, input, "id,username,name").pipe(
        Effect.flatMap((user) => user === undefined ? byName(input) : Effect.succeed(toUser(user)))
      )
      : byName(input.toLowerCase())
    return found.pipe(
      Effect.flatMap((user) => user === undefined ? Effect.fail(NotFound.of(`No photo user "${nameOrId}".`)) : Effect.succeed(user)),
      Effect.withSpan("ExternalSources.photo.lookupUser")
    )
  }

  return { lookupUser }
}
