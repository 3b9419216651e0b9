/**
 * Shared helpers of the contract-level API suites (Routes, Envelope, Client): the capability sets
 * each suite runs on, strict decoding of answers with the domain schemas, and the sandbox data
 * (feed identifiers, webhook channels) the feed routes are called with.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/Seed.ts"
import { SOURCES_LISTING } from "../../src/sandbox/sources/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import type { TestAppOptions } from "../utils/TestApp.ts"

/** "memory" and every database kind of this run (PGlite; PostgreSQL with TEST_DATABASE_URL). */
export const capabilitySets: ReadonlyArray<{ readonly name: string; readonly capabilities: TestAppOptions["capabilities"] }> = [
  { name: "memory", capabilities: "memory" },
  ...dbKinds.map((db) => ({ name: db, capabilities: { db } }))
]

/** Reads a body once, as text, so a failed assertion can show it. */
export const text = (res: Response) => Effect.promise(() => res.text())

/**
 * Asserts the status and decodes the JSON body with `schema`, refusing keys the schema does not
 * name: the answer must be exactly the documented shape.
 */
export const expectJson = <S extends Schema.Decoder<unknown>>(
  res: Response,
  status: number,
  schema: S,
  options: { readonly strict?: boolean } = {}
) =>
  Effect.gen(function*() {
    const body = yield* text(res)
    assert.strictEqual(res.status, status, `${res.url} → ${res.status}: ${body}`)
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/)
    const parsed: unknown = JSON.parse(body)
    return yield* Schema.decodeUnknownEffect(schema)(parsed, {
      onExcessProperty: options.strict === false ? "ignore" : "error",
      errors: "all"
    }).pipe(
      Effect.mapError((e) => new Error(`${res.url}: the answer does not match the schema: ${e.message}\n${body}`)),
      Effect.orDie
    )
  })

/** A sandbox source identifier per feed module (RSS paths are relative to the gateway URL). */
export const feedIdentifier = (m: FeedModuleName, gatewayUrl: string): string =>
  m === "rss" ? `${gatewayUrl}${SOURCES_LISTING.rss[0]}` : SOURCES_LISTING[m][0]!

export const FEED_MODULES: ReadonlyArray<FeedModuleName> = ["photo", "forum", "rss", "streaming", "microblog", "video"]

/** S1's text channels (where the bot may create or reuse a webhook). */
export const S1_TEXT = channelId(1, CHANNEL_INDEX.text)
export const S1_TEXT2 = channelId(1, CHANNEL_INDEX.text2)

/** A valid form body for S1. */
export const formBody = (title: string) => ({
  title,
  channel_id: S1_TEXT,
  workflow_live: true,
  steps: [
    { type: "message", string: "What is your name?", char_limit: [1, 100], alias: "Name" },
    { type: "reaction", string: "Pick one", answers_validation: ["yes", "no"], char_limit: [1, 10] }
  ]
})

/** The OpenAPI document's minimal shape. */
export const OpenApiDoc = Schema.Struct({
  openapi: Schema.String,
  info: Schema.Struct({ title: Schema.String, version: Schema.String }),
  paths: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))
})
