/**
 * Shared setup of the Feeds service suites (FeedsWebhooks, FeedsResolution, FeedsChanges): requests
 * as bot 2 in S1, the checks of a problem list and of token secrecy, and `feedsService`, which
 * registers a file's cases once per repository kind: the memory repo, then the SQL repo on every
 * database kind (each file its own database; every case builds fresh fakes and starts from an
 * empty feeds table). Nothing here holds state between files.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import type { Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { FeedCreate } from "../../src/domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { Feeds } from "../../src/services/feeds/Feeds.ts"
import type { FeedsConfig } from "../../src/services/feeds/FeedsConfig.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { access, BOT2_ID, feedsTestLayer, S1_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, WEBHOOK_S3_TOKEN } from "./FeedsFakeFixtures.ts"

export const A1 = access(BOT2_ID, S1_ID)
export const hookUrl = (id: string, token: string, base = "https://discord.com/api") => `${base}/webhooks/${id}/${token}`
export const S1_URL = hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN)

export const create = <M extends FeedModuleName>(module: M, body: FeedCreate<M>, a = A1) =>
  Feeds.use((f) => f.create(a, module, Result.succeed(body)))
export const createFails = <M extends FeedModuleName>(module: M, body: FeedCreate<M>, a = A1) => Effect.flip(create(module, body, a))
export const messages = (e: { readonly problems: ReadonlyArray<{ readonly message: string }> }) => e.problems.map((p) => p.message).join(" | ")
export const paths = (e: { readonly problems: ReadonlyArray<{ readonly additionalProperties?: Record<string, unknown> }> }) =>
  e.problems.map((p) => p.additionalProperties?.path)

const secrets = [WEBHOOK_S1_TOKEN, WEBHOOK_S3_TOKEN, "created-token-", "secret"]
export const assertNoToken = (value: unknown) => {
  const json = JSON.stringify(value)
  for (const s of secrets) assert.notInclude(json, s)
}

type Services = Layer.Success<ReturnType<typeof feedsTestLayer>>
type Provide<R> = <A, E>(self: Effect.Effect<A, E, Services>, config?: Layer.Layer<FeedsConfig>) => Effect.Effect<A, E, R>
type Test<R> = (name: string, self: () => Effect.Effect<unknown, unknown, R>) => void

/** A file's service cases, registered once per repo kind: `Feeds service: topic (memory repo)`, then one per database kind. */
export const feedsService = (topic: string, registerSuite: <R>(test: Test<R>, provide: Provide<R>) => void) => {
  describe(`Feeds service: ${topic} (memory repo)`, () => {
    registerSuite<never>((name, self) => it.effect(name, self), (self, config) => Effect.provide(self, feedsTestLayer(config)))
  })

  for (const kind of dbKinds) {
    layer(testDb(kind), { excludeTestServices: true })(`Feeds service: ${topic} (${kind} repo)`, (it) => {
      // One database per kind; each case starts from an empty feeds table (cases run one at a time).
      const clear = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM feeds`)
      registerSuite<SqlClient.SqlClient>(
        (name, self) => it.effect(name, self),
        (self, config) => Effect.andThen(Effect.orDie(clear), Effect.provide(self, feedsTestLayer(config, FeedsRepoSql)))
      )
    })
  }
}
