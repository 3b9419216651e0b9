/** The signature check of the interactions endpoint (forms-runtime.md §1), table by table. */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { MAX_SKEW_SECONDS, publicKeyOf, signatureProblem } from "../../src/services/submissions/InteractionSignature.ts"
import { makeSigner, signHex } from "./InteractionSigner.ts"

const signer = makeSigner()
const other = makeSigner()
const NOW = 1_800_000_000
const T = String(NOW)
const body = Buffer.from(JSON.stringify({ id: "1", type: 1, application_id: "2" }), "utf8")
const good = signHex(signer.privateKey, T, body)

const check = (over: Partial<{ signature: string | undefined; timestamp: string | undefined; body: Uint8Array; key: string; now: number }>) =>
  signatureProblem(
    { signature: "signature" in over ? over.signature : good, timestamp: "timestamp" in over ? over.timestamp : T, body: over.body ?? body },
    over.key ?? signer.publicKeyHex,
    over.now ?? NOW
  )

const flipHex = (hex: string, at: number) => hex.slice(0, at) + ((parseInt(hex[at]!, 16) ^ 1).toString(16)) + hex.slice(at + 1)

describe("signatureProblem", () => {
  it("accepts the platform's signature, in upper-case hex too", () => {
    expect(check({})).toBeUndefined()
    expect(check({ signature: good.toUpperCase() })).toBeUndefined()
    expect(check({ key: signer.publicKeyHex.toUpperCase() })).toBeUndefined()
  })

  it("accepts an empty body signed as such", () => {
    expect(check({ body: new Uint8Array(), signature: signHex(signer.privateKey, T, new Uint8Array()) })).toBeUndefined()
  })

  it("refuses a missing signature or timestamp, empty ones too", () => {
    expect(check({ signature: undefined })).toBe("missing signature")
    expect(check({ signature: "" })).toBe("missing signature")
    expect(check({ timestamp: undefined })).toBe("missing timestamp")
    expect(check({ timestamp: "" })).toBe("missing timestamp")
    expect(check({ signature: undefined, timestamp: undefined })).toBe("missing signature")
  })

  it("refuses another application's key", () => {
    expect(check({ key: other.publicKeyHex })).toBe("bad signature")
    expect(check({ signature: signHex(other.privateKey, T, body) })).toBe("bad signature")
  })

  it("refuses a flipped bit anywhere: body, timestamp, signature", () => {
    for (const i of [0, 7, body.length - 1]) {
      const flipped = Buffer.from(body)
      flipped[i] = flipped[i]! ^ 1
      expect(check({ body: flipped })).toBe("bad signature")
    }
    expect(check({ body: Buffer.concat([body, Buffer.from(" ")]) })).toBe("bad signature")
    expect(check({ body: body.subarray(0, body.length - 1) })).toBe("bad signature")
    // Another timestamp within the window: signed over the other one.
    expect(check({ timestamp: String(NOW + 1) })).toBe("bad signature")
    expect(check({ timestamp: String(NOW - 1) })).toBe("bad signature")
    for (const i of [0, 1, 63, 64, 126, 127]) expect(check({ signature: flipHex(good, i) })).toBe("bad signature")
  })

  it("refuses a signature that is not 128 hex digits", () => {
    expect(check({ signature: good.slice(0, 126) })).toBe("malformed signature")
    expect(check({ signature: good + "00" })).toBe("malformed signature")
    expect(check({ signature: good.slice(0, 127) })).toBe("malformed signature")
    expect(check({ signature: good + "0" })).toBe("malformed signature")
    expect(check({ signature: "g" + good.slice(1) })).toBe("malformed signature")
    expect(check({ signature: " " + good.slice(1) })).toBe("malformed signature")
    expect(check({ signature: good.slice(0, 127) + "\n" })).toBe("malformed signature")
    expect(check({ signature: `x${good}` })).toBe("malformed signature")
    expect(check({ signature: `${good}x` })).toBe("malformed signature")
    expect(check({ signature: Buffer.from(good, "hex").toString("base64") })).toBe("malformed signature")
  })

  it("refuses a key that is not 64 hex digits, or not a key", () => {
    expect(check({ key: signer.publicKeyHex.slice(0, 62) })).toBe("malformed key")
    expect(check({ key: signer.publicKeyHex + "00" })).toBe("malformed key")
    expect(check({ key: "z" + signer.publicKeyHex.slice(1) })).toBe("malformed key")
    expect(check({ key: `x${signer.publicKeyHex}` })).toBe("malformed key")
    expect(check({ key: `${signer.publicKeyHex}x` })).toBe("malformed key")
    expect(check({ key: "" })).toBe("malformed key")
    expect(check({ key: "00".repeat(32) })).not.toBeUndefined()
  })

  it("refuses a timestamp that is not plain Unix seconds", () => {
    for (const t of ["-1", "+1800000000", "1800000000.5", "1.8e9", " 1800000000", "1800000000 ", "0x6B49D200", "abc", "1".repeat(13)]) {
      expect(check({ timestamp: t, signature: signHex(signer.privateKey, t, body) }), t).toBe("malformed timestamp")
    }
    expect(check({ timestamp: "1".repeat(12), now: 111_111_111_111, signature: signHex(signer.privateKey, "1".repeat(12), body) })).toBeUndefined()
    expect(check({ timestamp: "0", now: 0, signature: signHex(signer.privateKey, "0", body) })).toBeUndefined()
  })

  it("accepts a timestamp up to 5 minutes off either way, refuses one beyond", () => {
    expect(MAX_SKEW_SECONDS).toBe(300)
    expect(check({ now: NOW + 300 })).toBeUndefined()
    expect(check({ now: NOW - 300 })).toBeUndefined()
    expect(check({ now: NOW + 301 })).toBe("stale timestamp")
    expect(check({ now: NOW - 301 })).toBe("stale timestamp")
    expect(check({ now: NOW + 300.5 })).toBe("stale timestamp")
    expect(check({ now: NOW - 300.5 })).toBe("stale timestamp")
    expect(check({ now: NOW + 299.9 })).toBeUndefined()
    expect(check({ now: NOW + 86_400 })).toBe("stale timestamp")
  })

  it("checks the timestamp before the key: a stale request under a bad key is stale", () => {
    expect(check({ now: NOW + 301, key: "zz" })).toBe("stale timestamp")
    expect(check({ signature: "zz", key: "zz" })).toBe("malformed signature")
  })
})

describe("publicKeyOf", () => {
  it("reads a hex key, in either case", () => {
    expect(publicKeyOf(signer.publicKeyHex)?.asymmetricKeyType).toBe("ed25519")
    expect(publicKeyOf(signer.publicKeyHex.toUpperCase())?.asymmetricKeyType).toBe("ed25519")
    // Any 32 bytes are taken as a key; one that is no point on the curve verifies nothing.
    expect(publicKeyOf("00".repeat(32))?.asymmetricKeyType).toBe("ed25519")
  })

  it("keeps a key object by its hex, at most KEPT_KEYS of them: then they all go", async () => {
    // A fresh copy of the module: the keys kept by other tests are not in this one's count.
    vi.resetModules()
    const fresh = await import("../../src/services/submissions/InteractionSignature.ts")
    const hexes = Array.from({ length: fresh.KEPT_KEYS + 1 }, (_, i) => i.toString(16).padStart(64, "0"))
    const first = fresh.publicKeyOf(hexes[0]!)
    expect(fresh.publicKeyOf(hexes[0]!)).toBe(first)
    for (const hex of hexes.slice(1, fresh.KEPT_KEYS)) fresh.publicKeyOf(hex)
    expect(fresh.publicKeyOf(hexes[0]!), "the KEPT_KEYS-th key still kept").toBe(first)
    fresh.publicKeyOf(hexes[fresh.KEPT_KEYS]!)
    const again = fresh.publicKeyOf(hexes[0]!)
    expect(again).not.toBe(first)
    expect(again?.equals(first!)).toBe(true)
  })

  it("answers null for what is not 32 bytes of hex", () => {
    expect(publicKeyOf("")).toBeNull()
    expect(publicKeyOf("0".repeat(63))).toBeNull()
    expect(publicKeyOf("0".repeat(65))).toBeNull()
    expect(publicKeyOf("q".repeat(64))).toBeNull()
  })
})
