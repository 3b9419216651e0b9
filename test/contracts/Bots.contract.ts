/**
 * The Bots contract: the registry every module request reads (which bots exist, their tokens) and
 * the operator's writes, on every layer. Each test uses its own ids: the layer is built once per block.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { Layer } from "effect"
import type { BotRecord } from "../../src/services/platform/Bots.ts"
import { Bots } from "../../src/services/platform/Bots.ts"

const bot = (id: string, name = `Bot ${id.slice(-2)}`, icon: string | null = null): BotRecord => ({
  id,
  name,
  icon,
  token: Redacted.make(`token-of-${id}-${name}`)
})

/** Comparable: the token's value instead of the Redacted box. */
const plain = (b: BotRecord | undefined) => b === undefined ? undefined : { ...b, token: Redacted.value(b.token) }

/** The registry's bots among `ids`, in its order. */
const listed = (ids: ReadonlyArray<string>) =>
  Effect.map(Bots.use((bots) => bots.list), (all) => all.filter((b) => ids.includes(b.id)).map(plain))

export const botsContract = <E>(name: string, botsLayer: Layer.Layer<Bots, E>) =>
  layer(botsLayer, { excludeTestServices: true })(`Bots contract (${name})`, (it) => {
    it.effect("a registered bot is read back whole, token included, and listed in registration order", () =>
      Effect.gen(function*() {
        const bots = yield* Bots
        const ids = ["910000000000000001", "910000000000000002", "910000000000000003"]
        const records = [bot(ids[0]!, "Alpha", "a1ce"), bot(ids[1]!), bot(ids[2]!, "Gamma")]
        for (const r of records) yield* bots.upsert(r)
        for (const r of records) assert.deepStrictEqual(plain(yield* bots.get(r.id)), plain(r))
        assert.deepStrictEqual(yield* listed(ids), records.map(plain))
      }))

    it.effect("registering an id again updates it in place: name, icon and token; still listed once", () =>
      Effect.gen(function*() {
        const bots = yield* Bots
        const ids = ["920000000000000001", "920000000000000002"]
        yield* bots.upsert(bot(ids[0]!, "First"))
        yield* bots.upsert(bot(ids[1]!, "Second"))
        const renamed = bot(ids[0]!, "First, renamed", "1c0n")
        yield* bots.upsert(renamed)
        assert.deepStrictEqual(plain(yield* bots.get(ids[0]!)), plain(renamed))
        assert.deepStrictEqual((yield* listed(ids)).map((b) => b?.name), ["First, renamed", "Second"])
      }))

    it.effect("removing a bot: true, and it is gone; removing it again or an unknown id: false", () =>
      Effect.gen(function*() {
        const bots = yield* Bots
        const id = "930000000000000001"
        yield* bots.upsert(bot(id))
        assert.isTrue(yield* bots.remove(id))
        assert.isUndefined(yield* bots.get(id))
        assert.deepStrictEqual(yield* listed([id]), [])
        assert.isFalse(yield* bots.remove(id))
        assert.isFalse(yield* bots.remove("939999999999999999"))
      }))

    it.effect("an id never registered is undefined, not an error", () =>
      Effect.gen(function*() {
        const bots = yield* Bots
        assert.isUndefined(yield* bots.get("949999999999999999"))
      }))
  })
