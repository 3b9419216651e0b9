/**
 * The streaming source: Twitch Helix with an app access token (client credentials).
 * `GET /helix/users?login=|id=`, `GET /helix/games?name=|id=`; Helix takes both keys in one request,
 * so a numeric input is looked up as id and login at once (the id wins).
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { NotFound } from "../../domain/infra/Errors.ts"
import type { ExternalGame, ExternalUser } from "../../services/sources/ExternalSources.ts"
import { makeAppToken, readAppToken } from "./AppToken.ts"
import { decode, type Failure, get, join, refuseUnauthorized, send, sendRaw, unavailable, type Upstream } from "./Upstream.ts"

export interface StreamingOptions {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Default `https://api.twitch.tv` (paths `/helix/...`). */
  readonly apiUrl?: string | undefined
  /** Default `https://id.twitch.tv` (path `/oauth2/token`). */
  readonly authUrl?: string | undefined
}

const Users = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.String, login: Schema.String, display_name: Schema.String }))
})
const Games = Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })) })

const LOGIN = /^[a-zA-Z0-9_]{1,25}$/
const NUMERIC = /^\d{1,20}$/

export const makeStreaming = (u: Upstream, options: StreamingOptions) =>
  Effect.gen(function*() {
    const apiUrl = options.apiUrl ?? "https://api.twitch.tv"
    const authUrl = options.authUrl ?? "https://id.twitch.tv"

    const token = yield* makeAppToken(
      send(
        u,
        HttpClientRequest.post(join(authUrl, "/oauth2/token"), { acceptJson: true }).pipe(
          HttpClientRequest.bodyUrlParams({
            client_id: options.clientId,
            client_secret: Redacted.value(options.clientSecret),
            grant_type: "client_credentials"
          })
        )
      ).pipe(Effect.flatMap((a) => readAppToken(u, a)))
    )

    const helix = (path: string, params: ReadonlyArray<readonly [string, string]>) =>
      token.withToken((accessToken) =>
        sendRaw(u, get(apiUrl, path, { urlParams: params, headers: { "client-id": options.clientId } }).pipe(
          HttpClientRequest.bearerToken(accessToken)
        ))
      ).pipe(Effect.flatMap(refuseUnauthorized(u)))

    /** Helix answers 400 to a malformed login or id: nothing by that name exists. */
    const data = <S extends typeof Users | typeof Games>(schema: S, path: string, params: ReadonlyArray<readonly [string, string]>) =>
      helix(path, params).pipe(
        Effect.flatMap((a) =>
          a.status === 400 || a.status === 200
            ? decode(u, schema)(a.status === 400 ? { data: [] } : a.body)
            : Effect.fail(unavailable(u, `answered ${a.status}`))
        )
      )

    const lookupUser = (nameOrId: string): Effect.Effect<ExternalUser, NotFound | Failure> => {
      const input = nameOrId.trim().replace(/^@/, "")
      const params: Array<readonly [string, string]> = []
      if (NUMERIC.test(input)) params.push(["id", input])
      if (LOGIN.test(input)) params.push(["login", input.toLowerCase()])
      if (params.length === 0) return Effect.fail(NotFound.of(`No streaming user "${nameOrId}".`))
      return data(Users, "/helix/users", params).pipe(
        Effect.flatMap(({ data }) => {
          const user = data.find((d) => d.id === input) ?? data.find((d) => d.login === input.toLowerCase())
          return user === undefined
            ? Effect.fail(NotFound.of(`No streaming user "${nameOrId}".`))
            : Effect.succeed({
              id: user.id,
              userName: user.login,
              displayName: user.display_name,
              url: `https://www.twitch.tv/${user.login}`
            })
        }),
        Effect.withSpan("ExternalSources.streaming.lookupUser")
      )
    }

    const lookupGame = (nameOrId: string): Effect.Effect<ExternalGame, NotFound | Failure> => {
      const input = nameOrId.trim()
      if (input.length === 0) return Effect.fail(NotFound.of("No game with an empty name."))
      const params: Array<readonly [string, string]> = [["name", input]]
      if (NUMERIC.test(input)) params.unshift(["id", input])
      return data(Games, "/helix/games", params).pipe(
        Effect.flatMap(({ data }) => {
          const game = data.find((g) => g.id === input) ??
            data.find((g) => g.name.toLowerCase() === input.toLowerCase()) ?? data[0]
          return game === undefined
            ? Effect.fail(NotFound.of(`No game "${nameOrId}".`))
            : Effect.succeed({ id: game.id, name: game.name })
        }),
        Effect.withSpan("ExternalSources.streaming.lookupGame")
      )
    }

    const gameNames = (ids: ReadonlyArray<string>) => {
      const wanted = [...new Set(ids.filter((id) => NUMERIC.test(id)))]
      const chunks: Array<Array<string>> = []
      // Helix takes at most 100 ids per request.
      for (let i = 0; i < wanted.length; i += 100) chunks.push(wanted.slice(i, i + 100))
      return Effect.forEach(chunks, (chunk) => data(Games, "/helix/games", chunk.map((id) => ["id", id] as const))).pipe(
        Effect.map((answers) => {
          const names = new Map(answers.flatMap((a) => a.data.map((g) => [g.id, g.name] as const)))
          return ids.flatMap((id) => {
            const name = names.get(id)
            return name === undefined ? [] : [name]
          })
        }),
        Effect.withSpan("ExternalSources.streaming.gameNames")
      )
    }

    return { lookupUser, lookupGame, gameNames }
  })
