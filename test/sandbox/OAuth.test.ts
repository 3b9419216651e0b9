import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import type { SchemaDocument } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { checkSchema } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import {
  ALICE_ID,
  ALL_PERMISSIONS,
  BOB_ID,
  CAROL_ID,
  PermissionBits,
  S1_ID,
  S2_ID,
  S3_ID,
  S4_ID,
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET
} from "../../src/sandbox/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"
import type { Answer } from "./SandboxCallFixtures.ts"

const doc = JSON.parse(
  readFileSync(new URL("../fixtures/discord/openapi-subset.json", import.meta.url), "utf8")
) as SchemaDocument
const assertShape = (schema: string, value: unknown) => assert.deepStrictEqual(checkSchema(doc, schema, value), [])

const REDIRECT = "http://127.0.0.1:9999/auth/idp/callback"
const VERIFIER = "sandbox-verifier-0123456789-0123456789-0123456789-abcdefghij"
const CHALLENGE = createHash("sha256").update(VERIFIER).digest("base64url")

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const authorizePath = (extra: Record<string, string>) =>
  `/sandbox/discord/oauth2/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: SANDBOX_CLIENT_ID,
    scope: "identify guilds",
    redirect_uri: REDIRECT,
    state: "st-123",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    ...extra
  })}`

/** Signs in as `userId` (login_hint) and returns the code from the redirect. */
const authorize = (userId: string) =>
  Effect.gen(function*() {
    const answer = yield* call(authorizePath({ login_hint: userId }))
    assert.strictEqual(answer.status, 302)
    const location = new URL(answer.headers.get("location") ?? "")
    assert.strictEqual(`${location.origin}${location.pathname}`, REDIRECT)
    assert.strictEqual(location.searchParams.get("state"), "st-123")
    return location.searchParams.get("code") ?? ""
  })

const basic = `Basic ${Buffer.from(`${SANDBOX_CLIENT_ID}:${SANDBOX_CLIENT_SECRET}`).toString("base64")}`

const tokenCall = (form: Record<string, string>, authorization: string | undefined = basic) =>
  call("/sandbox/discord/api/v10/oauth2/token", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(authorization ? { authorization } : {})
    },
    body: new URLSearchParams(form).toString()
  })

const exchange = (code: string, verifier = VERIFIER) =>
  tokenCall({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier })

const signIn = (userId: string) =>
  Effect.gen(function*() {
    const answer = yield* exchange(yield* authorize(userId))
    assert.strictEqual(answer.status, 200)
    return { access: String(field(answer.body, "access_token")), refresh: String(field(answer.body, "refresh_token")) }
  })

const me = (access: string) => call("/sandbox/discord/api/v10/users/@me", { headers: { authorization: `Bearer ${access}` } })
const myGuilds = (access: string) =>
  call("/sandbox/discord/api/v10/users/@me/guilds", { headers: { authorization: `Bearer ${access}` } })

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox OAuth2", (it) => {
  it.effect("the authorize page lists every user and a deny link", () =>
    Effect.gen(function*() {
      const page = yield* call(authorizePath({}))
      assert.strictEqual(page.status, 200)
      assert.match(page.headers.get("content-type") ?? "", /text\/html/)
      const html = String(page.body)
      for (const id of [ALICE_ID, BOB_ID, CAROL_ID]) assert.include(html, `login_hint=${id}`)
      assert.include(html, "deny=1")
    }))

  it.effect("deny redirects with error=access_denied and the state", () =>
    Effect.gen(function*() {
      const answer = yield* call(authorizePath({ deny: "1" }))
      assert.strictEqual(answer.status, 302)
      const location = new URL(answer.headers.get("location") ?? "")
      assert.strictEqual(location.searchParams.get("error"), "access_denied")
      assert.strictEqual(location.searchParams.get("state"), "st-123")
      assert.isNull(location.searchParams.get("code"))
    }))

  it.effect("an unknown client is refused on the page, never redirected", () =>
    Effect.gen(function*() {
      const answer = yield* call(authorizePath({ client_id: "someone-else" }))
      assert.strictEqual(answer.status, 400)
      assert.isNull(answer.headers.get("location"))
    }))

  it.effect("code + PKCE → tokens → /users/@me", () =>
    Effect.gen(function*() {
      const code = yield* authorize(ALICE_ID)
      const answer = yield* exchange(code)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(field(answer.body, "token_type"), "Bearer")
      assert.strictEqual(field(answer.body, "expires_in"), 604800)
      assert.strictEqual(field(answer.body, "scope"), "identify guilds")
      assert.isString(field(answer.body, "access_token"))
      assert.isString(field(answer.body, "refresh_token"))
      const user = yield* me(String(field(answer.body, "access_token")))
      assert.strictEqual(user.status, 200)
      assertShape("UserPIIResponse", user.body)
      assert.strictEqual(field(user.body, "id"), ALICE_ID)
      assert.strictEqual(field(user.body, "username"), "alice")
      assert.strictEqual(field(user.body, "discriminator"), "0")
      assert.strictEqual(field(user.body, "locale"), "en-US")
      assert.isUndefined(field(user.body, "bot"))
    }))

  it.effect("a code works once; a wrong verifier or redirect_uri is invalid_grant", () =>
    Effect.gen(function*() {
      const code = yield* authorize(BOB_ID)
      assert.strictEqual((yield* exchange(code)).status, 200)
      const reused = yield* exchange(code)
      assert.strictEqual(reused.status, 400)
      assert.strictEqual(field(reused.body, "error"), "invalid_grant")
      assert.isString(field(reused.body, "error_description"))

      const wrongVerifier = yield* exchange(yield* authorize(BOB_ID), "not-the-verifier-0000000000000000000000000000000")
      assert.strictEqual(wrongVerifier.status, 400)
      assert.strictEqual(field(wrongVerifier.body, "error"), "invalid_grant")

      const wrongRedirect = yield* tokenCall({
        grant_type: "authorization_code",
        code: yield* authorize(BOB_ID),
        redirect_uri: "http://127.0.0.1:9999/elsewhere",
        code_verifier: VERIFIER
      })
      assert.strictEqual(wrongRedirect.status, 400)
      assert.strictEqual(field(wrongRedirect.body, "error"), "invalid_grant")
    }))

  it.effect("clients authenticate with Basic or form fields", () =>
    Effect.gen(function*() {
      const viaForm = yield* tokenCall({
        grant_type: "authorization_code",
        code: yield* authorize(CAROL_ID),
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
        client_id: SANDBOX_CLIENT_ID,
        client_secret: SANDBOX_CLIENT_SECRET
      }, undefined)
      assert.strictEqual(viaForm.status, 200)
      const wrongSecret = yield* tokenCall(
        { grant_type: "authorization_code", code: yield* authorize(CAROL_ID), redirect_uri: REDIRECT },
        `Basic ${Buffer.from(`${SANDBOX_CLIENT_ID}:wrong`).toString("base64")}`
      )
      assert.strictEqual(wrongSecret.status, 401)
      assert.strictEqual(field(wrongSecret.body, "error"), "invalid_client")
      const grant = yield* tokenCall({ grant_type: "password" })
      assert.deepStrictEqual([grant.status, field(grant.body, "error")], [400, "unsupported_grant_type"])
    }))

  it.effect("refresh rotates: a new pair, the old refresh token is dead", () =>
    Effect.gen(function*() {
      const first = yield* signIn(ALICE_ID)
      const refreshed = yield* tokenCall({ grant_type: "refresh_token", refresh_token: first.refresh })
      assert.strictEqual(refreshed.status, 200)
      const access = String(field(refreshed.body, "access_token"))
      const refresh = String(field(refreshed.body, "refresh_token"))
      assert.notStrictEqual(access, first.access)
      assert.notStrictEqual(refresh, first.refresh)
      assert.strictEqual((yield* me(access)).status, 200)
      const again = yield* tokenCall({ grant_type: "refresh_token", refresh_token: first.refresh })
      assert.deepStrictEqual([again.status, field(again.body, "error")], [400, "invalid_grant"])
    }))

  it.effect("revoke ends the access and refresh tokens of the sign-in", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      const revoked = yield* call("/sandbox/discord/api/v10/oauth2/token/revoke", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
        body: new URLSearchParams({ token: tokens.access, token_type_hint: "access_token" }).toString()
      })
      assert.deepStrictEqual([revoked.status, revoked.body], [200, {}])
      const after = yield* me(tokens.access)
      assert.deepStrictEqual([after.status, after.body], [401, { message: "401: Unauthorized", code: 0 }])
      const refresh = yield* tokenCall({ grant_type: "refresh_token", refresh_token: tokens.refresh })
      assert.strictEqual(refresh.status, 400)
    }))

  it.effect("a user token cannot call bot-only routes", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      const guild = yield* call(`/sandbox/discord/api/v10/guilds/${S1_ID}`, {
        headers: { authorization: `Bearer ${tokens.access}` }
      })
      assert.strictEqual(guild.status, 401)
    }))

  it.effect("users' guilds carry the seeded permissions", () =>
    Effect.gen(function*() {
      const perms = (answer: Answer, guild: string): bigint | undefined => {
        const g = list(answer.body).find((x) => field(x, "id") === guild)
        return g === undefined ? undefined : BigInt(String(field(g, "permissions")))
      }
      const { ADMINISTRATOR, MANAGE_GUILD, MANAGE_WEBHOOKS, VIEW_AUDIT_LOG } = PermissionBits
      const four = ADMINISTRATOR | MANAGE_GUILD | MANAGE_WEBHOOKS | VIEW_AUDIT_LOG

      const alice = yield* myGuilds((yield* signIn(ALICE_ID)).access)
      assert.strictEqual(alice.status, 200)
      for (const g of list(alice.body)) assertShape("MyGuildResponse", g)
      assert.deepStrictEqual(list(alice.body).map((g) => field(g, "id")), [S1_ID, S2_ID, S3_ID])
      assert.strictEqual(field(list(alice.body)[0], "owner"), true)
      assert.strictEqual(perms(alice, S1_ID), ALL_PERMISSIONS)
      assert.strictEqual((perms(alice, S2_ID) ?? 0n) & four, MANAGE_GUILD)
      assert.strictEqual((perms(alice, S3_ID) ?? 0n) & four, 0n)

      const bob = yield* myGuilds((yield* signIn(BOB_ID)).access)
      assert.deepStrictEqual(list(bob.body).map((g) => field(g, "id")), [S1_ID, S3_ID, S4_ID])
      assert.strictEqual((perms(bob, S1_ID) ?? 0n) & four, 0n)
      assert.strictEqual(perms(bob, S3_ID), ALL_PERMISSIONS)
      assert.strictEqual(perms(bob, S4_ID), ALL_PERMISSIONS)

      const carol = yield* myGuilds((yield* signIn(CAROL_ID)).access)
      assert.isUndefined(perms(carol, S1_ID))
      assert.strictEqual((perms(carol, S4_ID) ?? 0n) & four, MANAGE_GUILD | MANAGE_WEBHOOKS | VIEW_AUDIT_LOG)
    }))
})

// Long enough that the first call after the sign-in comes within the token's life on a slow machine.
const TOKEN_TTL_SECONDS = 3

const ShortLived = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...defaultSandboxConfig, userTokenTtlSeconds: TOKEN_TTL_SECONDS }))
)

layer(ShortLived, { excludeTestServices: true })("sandbox OAuth2 token expiry", (it) => {
  it.effect("an expired user token is 401", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      assert.strictEqual((yield* me(tokens.access)).status, 200)
      // The token was issued before `me` answered: this is past its expiry.
      yield* Effect.sleep(`${TOKEN_TTL_SECONDS * 1000 + 100} millis`)
      const expired = yield* me(tokens.access)
      assert.deepStrictEqual([expired.status, expired.body], [401, { message: "401: Unauthorized", code: 0 }])
    }))
})

const Registered = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...defaultSandboxConfig, redirectUris: ["http://127.0.0.1:9999/auth/idp/callback"] }))
)

layer(Registered, { excludeTestServices: true })("sandbox OAuth2 redirect URIs", (it) => {
  it.effect("a code goes only to a registered redirect URI; anything else is an error page, never a redirect", () =>
    Effect.gen(function*() {
      assert.isNotEmpty(yield* authorize(ALICE_ID))
      for (const foreign of ["https://attacker.example/auth/idp/callback", "http://127.0.0.1:9998/auth/idp/callback", `${REDIRECT}?x=1`]) {
        for (const extra of [{ login_hint: ALICE_ID }, {}, { deny: "1" }, { response_type: "token" }]) {
          const refused = yield* call(authorizePath({ ...extra, redirect_uri: foreign }))
          assert.strictEqual(refused.status, 400, `${foreign} ${JSON.stringify(extra)}`)
          assert.isNull(refused.headers.get("location"))
          assert.include(String(refused.body), "Invalid OAuth2 redirect_uri")
        }
      }
    }))
})

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox OAuth2 redirect URIs when served alone", (it) => {
  it.effect("without registered URIs: loopback addresses only", () =>
    Effect.gen(function*() {
      const at = (redirect_uri: string) => call(authorizePath({ login_hint: ALICE_ID, redirect_uri }))
      assert.strictEqual((yield* at("http://127.0.0.1:4321/auth/idp/callback")).status, 302)
      assert.strictEqual((yield* at("http://localhost:4321/cb")).status, 302)
      for (const foreign of ["https://attacker.example/auth/idp/callback", "http://10.0.0.1/cb", "http://user@127.0.0.1/auth/idp/callback"]) {
        assert.strictEqual((yield* at(foreign)).status, 400, foreign)
      }
    }))
})
