/**
 * What the Auth*.test.ts files of the Auth service share: a sign-in through the fake platform (login
 * → approval → callback, then the exchange), a failure's tag, and the service on the in-memory store.
 */
import { Effect, Exit } from "effect"
import { Auth } from "../../src/services/auth/Auth.ts"
import type { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { authLayer, makeFakePlatform, testConfig } from "./AuthFixtures.ts"
import type { FakePlatform } from "./AuthFixtures.ts"

export const CLIENT = "https://client.example/callback"

export const failTag = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => Exit.isFailure(exit) ? exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error._tag : r._tag).join(",") : "success")

/** login → the platform approves → callback: the client's redirect URL. */
export const signInRedirect = (fake: FakePlatform, options: { readonly codeChallenge?: string; readonly state?: string } = {}) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const login = yield* auth.login({
      redirectUri: CLIENT,
      state: options.state,
      codeChallenge: options.codeChallenge,
      codeChallengeMethod: options.codeChallenge === undefined ? undefined : "S256"
    })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    return new URL(location)
  })
export const signIn = (fake: FakePlatform) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const url = yield* signInRedirect(fake)
    return yield* auth.exchange({ authorization: url.searchParams.get("code")!, codeVerifier: undefined })
  })

export const run = <A, E>(
  body: (fake: FakePlatform) => Effect.Effect<A, E, Auth | TokenStore>,
  config = testConfig()
) => {
  const fake = makeFakePlatform()
  return body(fake).pipe(Effect.provide(authLayer(TokenStoreMemory, fake, config)))
}
