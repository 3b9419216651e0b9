/**
 * The options matrix: every option on every module allowed or rejected by the module's create
 * schema (decoded as the API does: all errors, excess properties refused), every limit at its edge
 * and one past, and the update body's rules.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema, SchemaIssue } from "effect"
import { EVENT_TYPES, FeedModules, MODULE_OPTIONS, withDefaults } from "../../src/domain/feeds/Feed.ts"
import type { WebhookOptions } from "../../src/domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"

const MODULES: ReadonlyArray<FeedModuleName> = ["photo", "forum", "rss", "streaming", "microblog", "video"]
const ALL_OPTIONS = [
  "filter_mode",
  "nsfw",
  "filter_words",
  "filter_excl",
  "filter_event",
  "filter_flair",
  "filter_game",
  "custom_header",
  "webhook-name",
  "no-username-overwrite",
  "no-avatar-overwrite",
  "mention_roles",
  "embed",
  "embed_color",
  "thread_id",
  "forum_thread_name",
  "forum_tags",
  "crosspost",
  "split"
] as const
type OptionName = typeof ALL_OPTIONS[number]

/** The contract's table: which modules each option applies to. */
const APPLIES: Record<OptionName, ReadonlyArray<FeedModuleName>> = {
  filter_mode: ["photo", "forum", "rss", "microblog", "video"],
  nsfw: ["photo", "forum", "rss", "microblog", "video"],
  filter_words: ["photo", "forum", "rss", "microblog", "video"],
  filter_excl: ["photo", "forum", "rss", "microblog", "video"],
  filter_event: ["photo", "streaming", "video"],
  filter_flair: ["forum"],
  filter_game: ["streaming"],
  custom_header: MODULES,
  "webhook-name": MODULES,
  "no-username-overwrite": MODULES,
  "no-avatar-overwrite": MODULES,
  mention_roles: MODULES,
  embed: MODULES,
  embed_color: MODULES,
  thread_id: MODULES,
  forum_thread_name: MODULES,
  forum_tags: MODULES,
  crosspost: MODULES,
  split: MODULES
}

const DEFAULTS: Record<OptionName, unknown> = {
  filter_mode: "OR",
  nsfw: null,
  filter_words: null,
  filter_excl: false,
  filter_event: null,
  filter_flair: null,
  filter_game: null,
  custom_header: null,
  "webhook-name": null,
  "no-username-overwrite": false,
  "no-avatar-overwrite": false,
  mention_roles: null,
  embed: false,
  embed_color: null,
  thread_id: null,
  forum_thread_name: null,
  forum_tags: null,
  crosspost: false,
  split: false
}

const valid = (m: FeedModuleName, o: OptionName): ReadonlyArray<unknown> => {
  switch (o) {
    case "filter_mode":
      return ["AND", "OR"]
    case "nsfw":
      return [null, "censor", "skip", "only"]
    case "filter_words":
    case "filter_flair":
    case "filter_game":
      return [null, ["a"], ["x".repeat(100)], Array.from({ length: 50 }, (_, i) => `w${i}`)]
    case "filter_excl":
    case "no-username-overwrite":
    case "no-avatar-overwrite":
    case "embed":
    case "crosspost":
    case "split":
      return [true, false]
    case "mention_roles":
      return [null, [], ["310000000000000901"], Array.from({ length: 10 }, (_, i) => `31000000000000090${i}`)]
    case "embed_color":
      return [null, "#00ff7F", "#000000"]
    case "thread_id":
      return [null, "310000000000000150"]
    case "forum_thread_name":
      return [null, "%title%", "x".repeat(1024)]
    case "forum_tags":
      return [null, [], ["News"], ["x".repeat(20)], Array.from({ length: 20 }, (_, i) => `t${i}`)]
    case "filter_event": {
      const events = m in EVENT_TYPES ? EVENT_TYPES[m as keyof typeof EVENT_TYPES] : ["post"]
      return [null, [events[0]], [...events]]
    }
    case "custom_header":
      return [null, "", "%title% %url%", "x".repeat(1024)]
    case "webhook-name":
      return [null, "Feeds", "x".repeat(32)]
  }
}

const invalid = (m: FeedModuleName, o: OptionName): ReadonlyArray<unknown> => {
  switch (o) {
    case "filter_mode":
      return ["XOR", "and", null, 1]
    case "nsfw":
      return ["maybe", "", true]
    case "filter_words":
    case "filter_flair":
    case "filter_game":
      return [[], [""], ["x".repeat(101)], Array.from({ length: 51 }, (_, i) => `w${i}`), "a", [1]]
    case "filter_excl":
    case "no-username-overwrite":
    case "no-avatar-overwrite":
    case "embed":
    case "crosspost":
    case "split":
      return ["true", null, 0]
    case "mention_roles":
      return [["@everyone"], ["1", "1"], Array.from({ length: 11 }, (_, i) => `3100000000000009${10 + i}`), "1", [1]]
    case "embed_color":
      return ["red", "#fff", "00ff00", "#00ff001", "#gg0000", 255]
    case "thread_id":
      return ["abc", "", 5]
    case "forum_thread_name":
      return ["", "x".repeat(1025), 1]
    case "forum_tags":
      return [["x".repeat(21)], [""], ["News", "news"], Array.from({ length: 21 }, (_, i) => `t${i}`), "News"]
    case "filter_event": {
      const others = ["post", "live", "offline", "added", "updated"].filter((e) =>
        !(EVENT_TYPES[m as keyof typeof EVENT_TYPES] as ReadonlyArray<string> | undefined)?.includes(e)
      )
      return [[], ["bogus"], ...others.map((e) => [e]), "post"]
    }
    case "custom_header":
      return ["x".repeat(1025), 5]
    case "webhook-name":
      return ["x".repeat(33), false]
  }
}

const decodeCreate = (m: FeedModuleName, options: Record<string, unknown>) =>
  Schema.decodeUnknownEffect(FeedModules[m].create as Schema.Decoder<unknown>, { errors: "all", onExcessProperty: "error" })({
    feed_identifier: "someone",
    webhook_channel: "310000000000000102",
    webhook_options: options
  }).pipe(Effect.result)

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()
const issuePaths = (e: Schema.SchemaError) =>
  formatter(e.issue).issues.map((i) => (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("."))

describe("webhook_options matrix", () => {
  it("the domain table matches the contract's table", () => {
    for (const m of MODULES) {
      assert.deepStrictEqual(
        Object.keys(MODULE_OPTIONS[m]).sort(),
        ALL_OPTIONS.filter((o) => APPLIES[o].includes(m)).sort(),
        m
      )
    }
  })

  for (const m of MODULES) {
    for (const o of ALL_OPTIONS) {
      if (APPLIES[o].includes(m)) {
        it.effect(`${m}: ${o} is accepted with every valid value, rejected (naming it) with invalid ones`, () =>
          Effect.gen(function*() {
            for (const v of valid(m, o)) {
              const r = yield* decodeCreate(m, { [o]: v })
              assert.isTrue(Result.isSuccess(r), `${m}.${o} = ${JSON.stringify(v)?.slice(0, 40)} should be accepted`)
            }
            for (const v of invalid(m, o)) {
              const r = yield* decodeCreate(m, { [o]: v })
              if (Result.isSuccess(r)) return assert.fail(`${m}.${o} = ${JSON.stringify(v)?.slice(0, 40)} should be rejected`)
              const paths = issuePaths(r.failure)
              assert.isTrue(
                paths.some((p) => p.startsWith(`webhook_options.${o}`)),
                `${m}.${o} = ${JSON.stringify(v)?.slice(0, 40)}: issues at ${paths.join(", ")}`
              )
            }
          }))
      } else {
        it.effect(`${m}: ${o} does not apply and is rejected naming it`, () =>
          Effect.gen(function*() {
            const r = yield* decodeCreate(m, { [o]: valid(m, o)[1] ?? valid(m, o)[0] })
            if (Result.isSuccess(r)) return assert.fail(`${m}.${o} should be rejected`)
            assert.include(issuePaths(r.failure), `webhook_options.${o}`)
          }))
      }
    }
  }

  it.effect("an unknown option is rejected naming it; every problem is reported", () =>
    Effect.gen(function*() {
      const r = yield* decodeCreate("rss", { colour: "red", filter_mode: "XOR", "webhook-name": "x".repeat(33) })
      if (Result.isSuccess(r)) return assert.fail("accepted")
      const paths = issuePaths(r.failure)
      assert.include(paths, "webhook_options.colour")
      assert.include(paths, "webhook_options.filter_mode")
      assert.include(paths, "webhook_options.webhook-name")
    }))

  it("withDefaults fills every omitted option with the contract's default", () => {
    for (const m of MODULES) {
      const expected = Object.fromEntries(ALL_OPTIONS.filter((o) => APPLIES[o].includes(m)).map((o) => [o, DEFAULTS[o]])) as WebhookOptions
      assert.deepStrictEqual(withDefaults(m, undefined), expected)
      assert.deepStrictEqual(withDefaults(m, {}), expected)
      assert.deepStrictEqual(withDefaults(m, { custom_header: "h" }), { ...expected, custom_header: "h" })
    }
  })
})

describe("create and update bodies", () => {
  const decode = (schema: Schema.Decoder<unknown>, body: unknown) =>
    Schema.decodeUnknownEffect(schema, { errors: "all", onExcessProperty: "error" })(body).pipe(Effect.result)

  it.effect("create needs feed_identifier and one of webhook_channel / webhook_url", () =>
    Effect.gen(function*() {
      const s = FeedModules.photo.create as Schema.Decoder<unknown>
      assert.isTrue(Result.isSuccess(yield* decode(s, { feed_identifier: "a", webhook_channel: "1" })))
      assert.isTrue(Result.isSuccess(yield* decode(s, { feed_identifier: "a", webhook_url: "https://x" })))
      const neither = yield* decode(s, { feed_identifier: "a" })
      if (Result.isSuccess(neither)) return assert.fail("accepted")
      assert.include(issuePaths(neither.failure), "webhook_channel")
      const noIdent = yield* decode(s, { webhook_channel: "1" })
      if (Result.isSuccess(noIdent)) return assert.fail("accepted")
      assert.include(issuePaths(noIdent.failure), "feed_identifier")
    }))

  for (const m of MODULES) {
    it.effect(`${m} update: only webhook_options; feed_identifier, webhook_channel, webhook_url → rejected naming them`, () =>
      Effect.gen(function*() {
        const s = FeedModules[m].update as Schema.Decoder<unknown>
        assert.isTrue(Result.isSuccess(yield* decode(s, { webhook_options: {} })))
        const missing = yield* decode(s, {})
        if (Result.isSuccess(missing)) return assert.fail("accepted without webhook_options")
        assert.include(issuePaths(missing.failure), "webhook_options")
        for (const field of ["feed_identifier", "webhook_channel", "webhook_url"]) {
          const r = yield* decode(s, { webhook_options: {}, [field]: "1" })
          if (Result.isSuccess(r)) return assert.fail(`accepted ${field}`)
          assert.include(issuePaths(r.failure), field)
        }
      }))
  }
})
