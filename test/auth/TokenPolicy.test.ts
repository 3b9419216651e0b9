/**
 * The token policy of TokenStore.fromStorage on its own (issue #19): a refresh token presented again
 * within the grace after its rotation is a race (refused, nothing revoked), from the grace on a reuse
 * (the family is revoked, with its platform tokens for the caller to revoke there). Storage is a
 * script: what it reports, and which families it was asked to revoke.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { RevokedFamily, RotateAttempt, TokenStorage } from "../../src/services/auth/TokenStore.ts"
import { REFRESH_RACE_GRACE_MS, TokenStore } from "../../src/services/auth/TokenStore.ts"

const pair = {
  access: { token: "a", issuedAt: new Date(0), expiresAt: new Date(1) },
  refresh: { token: "r", issuedAt: new Date(0), expiresAt: new Date(1) }
}
const platform = { accessEnc: "enc-a", refreshEnc: "enc-r", expiresAt: new Date(0) }

/** A storage that reports `attempt` on rotation and records revocations. */
const scripted = (attempt: RotateAttempt) => {
  const revoked: Array<string> = []
  const storage = new Proxy({} as TokenStorage, {
    get: (_, name) => {
      if (name === "rotateRefresh") return () => Effect.succeed(attempt)
      if (name === "revokeFamily") {
        return (familyId: string) =>
          Effect.sync((): RevokedFamily => {
            revoked.push(familyId)
            return { familyId, platform }
          })
      }
      return () => Effect.die(`unexpected call: ${String(name)}`)
    }
  })
  return { storage, revoked }
}

const rotatedAgo = (ms: number) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(1_000_000_000_000)
    return { _tag: "AlreadyRotated", familyId: "fam-1", rotatedAt: new Date(1_000_000_000_000 - ms) } as const
  })

describe("TokenStore.fromStorage: the refresh-token policy", () => {
  it.effect("Rotated and Invalid pass through; nothing is revoked", () =>
    Effect.gen(function*() {
      for (const attempt of [{ _tag: "Rotated", familyId: "fam-1" }, { _tag: "Invalid" }] as const) {
        const { storage, revoked } = scripted(attempt)
        assert.deepStrictEqual(yield* TokenStore.fromStorage(storage).rotateRefresh("r", pair), attempt)
        assert.deepStrictEqual(revoked, [])
      }
    }))

  it.effect("presented again within the grace (10 s by default), also from a clock a little behind: Raced, nothing revoked", () =>
    Effect.gen(function*() {
      assert.strictEqual(REFRESH_RACE_GRACE_MS, 10_000)
      for (const ago of [0, 1, 9_999, -5_000]) {
        const { storage, revoked } = scripted(yield* rotatedAgo(ago))
        assert.deepStrictEqual(yield* TokenStore.fromStorage(storage).rotateRefresh("r", pair), { _tag: "Raced", familyId: "fam-1" })
        assert.deepStrictEqual(revoked, [])
      }
    }))

  it.effect("presented again from the grace on: Reused, the family revoked with its platform tokens", () =>
    Effect.gen(function*() {
      for (const ago of [10_000, 10_001, 86_400_000]) {
        const { storage, revoked } = scripted(yield* rotatedAgo(ago))
        assert.deepStrictEqual(yield* TokenStore.fromStorage(storage).rotateRefresh("r", pair), {
          _tag: "Reused",
          familyId: "fam-1",
          revoked: { familyId: "fam-1", platform }
        })
        assert.deepStrictEqual(revoked, ["fam-1"])
      }
    }))

  it.effect("another grace can be given", () =>
    Effect.gen(function*() {
      const raced = scripted(yield* rotatedAgo(1_999))
      assert.strictEqual((yield* TokenStore.fromStorage(raced.storage, 2_000).rotateRefresh("r", pair))._tag, "Raced")
      const reused = scripted(yield* rotatedAgo(2_000))
      assert.strictEqual((yield* TokenStore.fromStorage(reused.storage, 2_000).rotateRefresh("r", pair))._tag, "Reused")
    }))
})
