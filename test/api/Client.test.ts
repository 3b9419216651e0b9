/**
 * The typed client (HttpApiClient derived from src/http/contract/Api.ts) round-trips a call of every group
 * against the running gateway: auth, general, forms, the six feed groups and ops. Its answers are
 * decoded by the same schemas the server encodes with, and its errors arrive as the domain classes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BotId, FeedId, FormId, ServerId } from "../../src/domain/infra/Ids.ts"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { GAMES, STREAMING_USERS } from "../../src/sandbox/sources/Seed.ts"
import { signIn, TestApp, typedClient } from "../utils/TestApp.ts"
import { capabilitySets, FEED_MODULES, feedIdentifier, S1_TEXT2 } from "./ContractFixtures.ts"

const params = { appClientId: BotId.make(BOT1_ID), serverId: ServerId.make(S1_ID) }

for (const set of capabilitySets) {
  layer(TestApp.layer({ capabilities: set.capabilities }), { excludeTestServices: true, timeout: 60_000 })(
    `typed client (${set.name})`,
    (it) => {
      it.effect("auth: check, refresh, revoke; an unknown token fails as Unauthorized", () =>
        Effect.gen(function*() {
          const tokens = yield* signIn(ALICE_ID)
          const client = yield* typedClient(undefined)
          const check = yield* client.auth.check({ headers: { authorization: tokens.access_token } })
          assert.isTrue(check.is_valid)
          const refreshed = yield* client.auth.refresh({ headers: { "x-refresh-token": tokens.refresh_token } })
          assert.strictEqual(refreshed.token_type, "Bearer")
          const revoked = yield* client.auth.revoke({ headers: { authorization: refreshed.access_token } })
          assert.deepStrictEqual(revoked, { success: true })
          const error = yield* Effect.flip(client.auth.check({ headers: { authorization: refreshed.access_token } }))
          assert.strictEqual(error._tag, "Unauthorized")
        }))

      it.effect("general: user, bots, servers, server, modules, logs", () =>
        Effect.gen(function*() {
          const { access_token } = yield* signIn(ALICE_ID)
          const client = yield* typedClient(access_token)
          assert.strictEqual((yield* client.general.user()).id, ALICE_ID)
          assert.include((yield* client.general.bots()).bots.map((b) => b.id), BOT1_ID)
          assert.include((yield* client.general.servers({ params: { appClientId: params.appClientId } })).servers.map((s) => s.id), S1_ID)
          assert.strictEqual((yield* client.general.server({ params })).id, S1_ID)
          assert.strictEqual((yield* client.general.modules({ params })).modules.length, 7)
          const logs = yield* client.general.logs({ params, query: { page_size: "5" } })
          assert.strictEqual(logs.page_size, 5)
        }))

      it.effect("forms: create, get, update, list, delete; a missing form fails as NotFound", () =>
        Effect.gen(function*() {
          const { access_token } = yield* signIn(ALICE_ID)
          const client = yield* typedClient(access_token)
          const created = yield* client.forms.create({
            params,
            payload: { title: "Client form", steps: [{ type: "message", string: "Why?", char_limit: [1, 50] }] }
          })
          const formId = FormId.make(created.workflow_id!)
          const got = yield* client.forms.get({ params: { ...params, formId } })
          assert.strictEqual(got.title, "Client form")
          const updated = yield* client.forms.update({ params: { ...params, formId }, payload: { title: "Client form 2" } })
          assert.strictEqual(updated.title, "Client form 2")
          assert.deepStrictEqual(updated.steps, [], "PATCH replaces the whole form")
          assert.include((yield* client.forms.list({ params })).forms.map((f) => f.workflow_id), created.workflow_id)
          assert.deepStrictEqual(yield* client.forms.delete({ params: { ...params, formId } }), { success: true })
          const error = yield* Effect.flip(client.forms.get({ params: { ...params, formId } }))
          assert.strictEqual(error._tag, "NotFound")
        }))

      it.effect("every feed group: create, list, update, delete", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { access_token } = yield* signIn(ALICE_ID)
          const client = yield* typedClient(access_token)
          for (const m of FEED_MODULES) {
            const group = client[m]
            const feed = yield* group.create({
              params,
              payload: { feed_identifier: feedIdentifier(m, app.url), webhook_channel: S1_TEXT2 }
            })
            assert.include((yield* group.list({ params })).feeds.map((f) => f.id), feed.id, m)
            const feedId = FeedId.make(feed.id)
            const updated = yield* group.update({
              params: { ...params, feedId },
              payload: { webhook_options: { "no-avatar-overwrite": true } }
            })
            assert.isTrue(updated.webhook_options["no-avatar-overwrite"], m)
            assert.deepStrictEqual(yield* group.delete({ params: { ...params, feedId } }), { success: true }, m)
          }
        }))

      it.effect("lookups through the client: streaming getUserId and getGameId", () =>
        Effect.gen(function*() {
          const { access_token } = yield* signIn(ALICE_ID)
          const client = yield* typedClient(access_token)
          const user = yield* client.streaming.getUserId({ params: { ...params, userName: STREAMING_USERS[1]!.login } })
          assert.strictEqual(user.userId, STREAMING_USERS[1]!.id)
          const game = yield* client.streaming.getGameId({ params: { ...params, gameName: GAMES[0]!.name } })
          assert.deepStrictEqual(game, { gameId: GAMES[0]!.id, gameName: GAMES[0]!.name })
        }))

      it.effect("ops: healthz and readyz", () =>
        Effect.gen(function*() {
          const client = yield* typedClient(undefined)
          assert.deepStrictEqual(yield* client.healthz(), { status: "ok" })
          assert.deepStrictEqual(yield* client.readyz(), { status: "ready" })
        }))
    }
  )
}
