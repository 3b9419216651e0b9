/** SANDBOX_EXTRA_USERS: extra seeded users (load tests) who may manage S1 and read its audit log. */
import { assert, describe, it, vi } from "@effect/vitest"
import { extraUsers, PermissionBits } from "../../src/sandbox/Seed.ts"

describe("sandbox extra users", () => {
  it("makes N distinct 18-digit users, capped", () => {
    const users = extraUsers(50)
    assert.strictEqual(users.length, 50)
    assert.strictEqual(new Set(users.map((u) => u.id)).size, 50)
    for (const u of users) assert.match(u.id, /^\d{18}$/)
    assert.strictEqual(extraUsers(0).length, 0)
    assert.strictEqual(extraUsers(-3).length, 0)
    assert.strictEqual(extraUsers(20_000).length, 10_000)
  })

  it("from the environment: members of S1 with MANAGE_GUILD and VIEW_AUDIT_LOG; none by default", async () => {
    vi.resetModules()
    const plain = await import("../../src/sandbox/Seed.ts")
    assert.strictEqual(plain.SEED.users.length, 3)
    vi.stubEnv("SANDBOX_EXTRA_USERS", "4")
    try {
      vi.resetModules()
      const seed = await import("../../src/sandbox/Seed.ts")
      assert.strictEqual(seed.SEED.users.length, 7)
      const s1 = seed.findGuild(seed.S1_ID)!
      const id = seed.extraUsers(4)[3]!.id
      assert.isDefined(seed.findUser(id))
      const perms = seed.computePermissions(s1, id)!
      assert.notStrictEqual(perms & PermissionBits.MANAGE_GUILD, 0n)
      assert.notStrictEqual(perms & PermissionBits.VIEW_AUDIT_LOG, 0n)
      assert.isUndefined(seed.computePermissions(seed.findGuild(seed.S2_ID)!, id))
    } finally {
      vi.unstubAllEnvs()
      vi.resetModules()
    }
  })
})
