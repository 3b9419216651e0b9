/** Secrets at rest: AES-256-GCM, fail-closed decryption, key rotation and the re-encrypt command. */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Bots } from "../../src/services/platform/Bots.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { BotsSql } from "../../src/layers/platform/BotsSql.ts"
import { reencryptAll } from "../../src/layers/infra/Reencrypt.ts"
import { TaskboardPairingsSql } from "../../src/layers/taskboard/TaskboardPairingsSql.ts"
import { TaskboardPairings } from "../../src/services/taskboard/TaskboardPairings.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const k1 = generateKey()
const k2 = generateKey()
const old = Cipher.make(parseKeyring(`k1:${k1}`))
const rotated = Cipher.make(parseKeyring(`k2:${k2},k1:${k1}`))
const onlyNew = Cipher.make(parseKeyring(`k2:${k2}`))

describe("Cipher", () => {
  it.effect("round-trips, with a fresh nonce each time and the key id in the envelope", () =>
    Effect.gen(function*() {
      const a = yield* old.encrypt(Redacted.make("bot-token"), "bot:1:token")
      const b = yield* old.encrypt(Redacted.make("bot-token"), "bot:1:token")
      assert.notStrictEqual(a, b)
      assert.match(a, /^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
      assert.notInclude(a, "bot-token")
      assert.strictEqual(Redacted.value(yield* old.decrypt(a, "bot:1:token")), "bot-token")
    }))

  it.effect("fails closed: tampered ciphertext, another row's data, an unknown key id, garbage", () =>
    Effect.gen(function*() {
      const ct = yield* old.encrypt(Redacted.make("secret"), "bot:1:token")
      const [v, id, nonce, body] = ct.split(".")
      const flipped = body!.slice(0, -2) + (body!.slice(-2) === "AA" ? "AB" : "AA")
      const cases = [
        [`${v}.${id}.${nonce}.${flipped}`, "bot:1:token"],
        [ct, "bot:2:token"],
        [`${v}.k9.${nonce}.${body}`, "bot:1:token"],
        ["not-a-ciphertext", "bot:1:token"],
        [`v2.${id}.${nonce}.${body}`, "bot:1:token"]
      ] as const
      for (const [text, aad] of cases) {
        const exit = yield* Effect.exit(old.decrypt(text, aad))
        assert.isTrue(Exit.isFailure(exit), `${text} / ${aad} must not decrypt`)
      }
    }))

  it("refuses malformed keyrings", () => {
    assert.throws(() => parseKeyring(""))
    assert.throws(() => parseKeyring("k1:dG9vLXNob3J0"))
    assert.throws(() => parseKeyring(`k1:${k1},k1:${k2}`))
    assert.throws(() => parseKeyring(`bad id!:${k1}`))
    assert.strictEqual(parseKeyring(k1).activeKeyId, "k1")
  })
})

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true })(`key rotation on ${kind}`, (it) => {
    it.effect("old rows stay readable after a rotation; reencrypt moves them to the active key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const withCipher = (cipher: Cipher["Service"]) =>
          Layer.mergeAll(BotsSql, TaskboardPairingsSql).pipe(Layer.provide(Layer.succeed(Cipher, cipher)))

        // Written under k1.
        yield* Effect.gen(function*() {
          const bots = yield* Bots
          yield* bots.upsert({ id: "900", name: "Old", icon: null, token: Redacted.make("old-bot-token") })
          const pairings = yield* TaskboardPairings
          yield* pairings.pair("901", { teamId: "t", key: Redacted.make("trello-key"), token: Redacted.make("trello-token") })
        }).pipe(Effect.provide(withCipher(old)))

        // After the rotation (k2 active, k1 kept) the old rows still read.
        const before = yield* Effect.gen(function*() {
          const bots = yield* Bots
          return (yield* bots.get("900"))!
        }).pipe(Effect.provide(withCipher(rotated)))
        assert.strictEqual(Redacted.value(before.token), "old-bot-token")

        const moved = yield* reencryptAll.pipe(Effect.provideService(Cipher, rotated))
        assert.strictEqual(moved, 2)
        const rows = yield* sql<{ v: string }>`SELECT token_enc AS v FROM bots UNION ALL SELECT credentials_enc FROM taskboard_pairings`
        for (const r of rows) assert.match(r.v, /^v1\.k2\./)
        assert.strictEqual(yield* reencryptAll.pipe(Effect.provideService(Cipher, rotated)), 0, "a second run moves nothing")

        // With k1 dropped, everything still decrypts.
        const after = yield* Effect.gen(function*() {
          const bots = yield* Bots
          const pairings = yield* TaskboardPairings
          return { bot: (yield* bots.get("900"))!, pairing: (yield* pairings.get("901"))! }
        }).pipe(Effect.provide(withCipher(onlyNew)))
        assert.strictEqual(Redacted.value(after.bot.token), "old-bot-token")
        assert.strictEqual(Redacted.value(after.pairing.token), "trello-token")
      }))
  })
}
