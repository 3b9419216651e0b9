/**
 * The Auth service from its three pieces (Auth.ts): the sign-in redirects, the gateway's tokens and
 * the platform token of a sign-in, over one family store. Requires TokenStore, Cipher, ChatPlatform,
 * AuthSettings.
 */
import { Effect, Layer } from "effect"
import { Auth } from "./Auth.ts"
import { makeFamilies } from "./AuthFamily.ts"
import { makePlatformToken } from "./AuthPlatformToken.ts"
import { makeSignIn } from "./AuthSignIn.ts"
import { makeTokenLifecycle } from "./AuthTokens.ts"

export const AuthLive = Layer.effect(
  Auth,
  Effect.gen(function*() {
    const families = yield* makeFamilies
    const signIn = yield* makeSignIn(families)
    const tokens = yield* makeTokenLifecycle(families)
    const platform = yield* makePlatformToken(families)
    return Auth.of({ ...signIn, ...tokens, ...platform })
  })
)
