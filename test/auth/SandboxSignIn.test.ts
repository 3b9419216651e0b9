/**
 * Sign-in against the sandbox's OAuth2 through the live Discord client (login_hint skips the page):
 * login → authorize → callback → token → platform token → /users/@me; then refresh and revoke.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { SettingsLive } from "../../src/layers/config/Settings.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ALICE_ID, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } from "../../src/sandbox/Seed.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { AuthLive } from "../../src/services/auth/AuthLive.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher } from "../../src/services/infra/Cipher.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { testConfig, testKeyring } from "./AuthFixtures.ts"

const GATEWAY = "http://127.0.0.1:8080"
const CLIENT = "http://127.0.0.1:5173/cb"

const Platform = Layer.unwrap(Effect.map(SandboxServer, (server) =>
  ChatPlatformDiscord.layer({
    ...SandboxMode.platformUrls(server.url),
    clientId: SANDBOX_CLIENT_ID,
    clientSecret: Redacted.make(SANDBOX_CLIENT_SECRET)
  })
)).pipe(Layer.provide(FetchHttpClient.layer))

const Env = AuthLive.pipe(
  Layer.provideMerge(Layer.mergeAll(
    TokenStoreMemory,
    Cipher.layer(testKeyring),
    Platform,
    SettingsLive(testConfig({ publicUrl: GATEWAY, allowedRedirectUris: ["http://127.0.0.1/cb"] }))
  )),
  Layer.provideMerge(SandboxServer.layer())
)

const follow = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual" })
    await response.text()
    return { status: response.status, location: response.headers.get("location") }
  })

layer(Env, { excludeTestServices: true })("sign-in against the sandbox", (it) => {
  it.effect("alice signs in; the gateway reads her with the platform token it keeps", () =>
    Effect.gen(function*() {
      const auth = yield* Auth
      const store = yield* TokenStore
      const platform = yield* ChatPlatform
      const login = yield* auth.login({ redirectUri: CLIENT, state: "c-state", codeChallenge: undefined, codeChallengeMethod: undefined })
      const authorize = new URL(login.location)
      assert.strictEqual(authorize.searchParams.get("scope"), "identify guilds")
      assert.strictEqual(authorize.searchParams.get("code_challenge_method"), "S256")
      authorize.searchParams.set("login_hint", ALICE_ID)
      const approved = yield* follow(authorize.href)
      assert.include([302, 303, 307], approved.status)
      const back = new URL(approved.location!)
      assert.strictEqual(back.origin + back.pathname, `${GATEWAY}/auth/idp/callback`)

      const { location } = yield* auth.callback({
        code: back.searchParams.get("code") ?? undefined,
        state: back.searchParams.get("state") ?? undefined,
        error: back.searchParams.get("error") ?? undefined,
        cookie: login.cookie.value
      })
      const target = new URL(location)
      assert.strictEqual(target.origin + target.pathname, CLIENT)
      assert.strictEqual(target.searchParams.get("state"), "c-state")
      const tokens = yield* auth.exchange({ authorization: target.searchParams.get("code")!, codeVerifier: undefined })
      const principal = (yield* store.resolveAccess(tokens.access_token))!
      assert.strictEqual(principal.userId, ALICE_ID)
      const me = yield* platform.getCurrentUser(yield* auth.platformToken(principal))
      assert.strictEqual(me.id, ALICE_ID)

      const next = yield* auth.refresh(tokens.refresh_token)
      assert.isDefined(yield* store.resolveAccess(next.access_token))
      assert.deepStrictEqual(yield* auth.revoke(next.access_token), { success: true })
      assert.isUndefined(yield* store.resolveAccess(next.access_token))
    }), 30_000)

  it.effect("a denial at the platform reaches the client as error=access_denied", () =>
    Effect.gen(function*() {
      const auth = yield* Auth
      const login = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
      const authorize = new URL(login.location)
      authorize.searchParams.set("deny", "1")
      const denied = new URL((yield* follow(authorize.href)).location!)
      const { location } = yield* auth.callback({
        code: undefined,
        state: denied.searchParams.get("state") ?? undefined,
        error: denied.searchParams.get("error") ?? undefined,
        cookie: login.cookie.value
      })
      assert.strictEqual(new URL(location).searchParams.get("error"), "access_denied")
    }), 30_000)
})
