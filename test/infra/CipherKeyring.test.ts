/**
 * What an operator and a stored secret see of the cipher, beyond Cipher.test.ts: the refusal of a
 * malformed TOKEN_ENCRYPTION_KEY names what is wrong; white space and empty entries are ignored; the
 * first key is the active one and names every new ciphertext; a ciphertext names its refusal; an
 * empty secret round-trips (its body is the tag alone); only a ciphertext under another key is stale.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"

const k1 = generateKey()
const k2 = generateKey()

const refusal = (value: string) => {
  try {
    parseKeyring(value)
  } catch (e) {
    return (e as Error).message
  }
  return "accepted"
}

describe("parseKeyring: TOKEN_ENCRYPTION_KEY", () => {
  it("a refusal says what is wrong", () => {
    assert.strictEqual(refusal(""), "expected at least one key")
    assert.strictEqual(refusal(" , ,"), "expected at least one key")
    assert.strictEqual(refusal("k1:dG9vLXNob3J0"), "key \"k1\" must be 32 bytes in base64 (got 9)")
    assert.strictEqual(refusal(`k1:${k1},k1:${k2}`), "key id \"k1\" appears twice")
    assert.strictEqual(refusal(`${k1},${k2}`), "key id \"k1\" appears twice")
    assert.strictEqual(refusal(`bad id!:${k1}`), "key id \"bad id!\" must be 1-16 characters of [A-Za-z0-9_-]")
    assert.strictEqual(refusal(`:${k1}`), "key id \"\" must be 1-16 characters of [A-Za-z0-9_-]")
    assert.strictEqual(refusal(`${"a".repeat(17)}:${k1}`), `key id "${"a".repeat(17)}" must be 1-16 characters of [A-Za-z0-9_-]`)
    assert.strictEqual(refusal(`x${"a".repeat(16)}:${k1}`), `key id "x${"a".repeat(16)}" must be 1-16 characters of [A-Za-z0-9_-]`)
  })

  it("ids of 1 to 16 of [A-Za-z0-9_-]; white space and empty entries ignored; the first is active", () => {
    const ring = parseKeyring(` ${"Az09_-".padEnd(16, "x")}:${k2} ,, k:${k1} ,`)
    assert.strictEqual(ring.activeKeyId, "Az09_-xxxxxxxxxx")
    assert.deepStrictEqual([...ring.keys.keys()], ["Az09_-xxxxxxxxxx", "k"])
    assert.deepStrictEqual(ring.keys.get("k"), Buffer.from(k1, "base64"))
    const bare = parseKeyring(k1)
    assert.strictEqual(bare.activeKeyId, "k1")
    assert.deepStrictEqual([...bare.keys.keys()], ["k1"])
  })
})

describe("Cipher: ciphertexts", () => {
  const rotated = Cipher.make(parseKeyring(`k2:${k2},k1:${k1}`))
  const old = Cipher.make(parseKeyring(`k1:${k1}`))

  it.effect("new ciphertexts are under the first (active) key; only others are stale", () =>
    Effect.gen(function*() {
      const ct = yield* rotated.encrypt(Redacted.make("s"), "row:1")
      assert.match(ct, /^v1\.k2\./)
      assert.isFalse(rotated.isStale(ct))
      const before = yield* old.encrypt(Redacted.make("s"), "row:1")
      assert.isTrue(rotated.isStale(before))
      assert.isFalse(old.isStale(before))
      assert.strictEqual(Redacted.value(yield* rotated.decrypt(before, "row:1")), "s")
    }))

  it.effect("an empty secret and a non-ASCII one round-trip", () =>
    Effect.gen(function*() {
      for (const secret of ["", "clé 🔑"]) {
        const ct = yield* old.encrypt(Redacted.make(secret), "row:2")
        assert.strictEqual(Redacted.value(yield* old.decrypt(ct, "row:2")), secret)
      }
    }))

  it.effect("a refused ciphertext names the check that refused it", () =>
    Effect.gen(function*() {
      const ct = yield* old.encrypt(Redacted.make("secret"), "row:3")
      const [, , nonce, body] = ct.split(".")
      const short = Buffer.alloc(15).toString("base64url")
      const tagOnly = Buffer.alloc(16).toString("base64url")
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["v1", "cannot decrypt: not a v1 ciphertext"],
        ["v1.k1", "cannot decrypt: not a v1 ciphertext"],
        [`v1.k1.${nonce}`, "cannot decrypt: not a v1 ciphertext"],
        [`v2.k1.${nonce}.${body}`, "cannot decrypt: not a v1 ciphertext"],
        [`v1.k9.${nonce}.${body}`, "cannot decrypt: unknown key id k9"],
        [`v1.k1.${nonce}.${short}`, "cannot decrypt: ciphertext too short"],
        [`v1.k1.${nonce}.${tagOnly}`, "cannot decrypt: Unsupported state or unable to authenticate data"]
      ]
      for (const [text, message] of cases) {
        const e = yield* Effect.flip(old.decrypt(text, "row:3"))
        assert.strictEqual(e._tag, "CipherError")
        assert.strictEqual(e.message, message, text)
      }
    }))
})
