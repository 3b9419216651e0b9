/** The sandbox's users: Alice, Bob and Carol, plus `SANDBOX_EXTRA_USERS` generated ones for load tests. */
import { ALICE_ID, BOB_ID, CAROL_ID } from "./Ids.ts"
import type { SeedUser } from "./Shapes.ts"

/**
 * Extra users for load tests (`SANDBOX_EXTRA_USERS=N`, at most 10,000): `loadN`, ids
 * `11` + 16 digits, members of S1 with its Moderators role (MANAGE_GUILD, VIEW_AUDIT_LOG).
 */
export const extraUsers = (count: number): ReadonlyArray<SeedUser> =>
  Array.from({ length: Math.max(0, Math.min(10_000, Math.floor(count))) }, (_, i) => ({
    id: `11${String(i + 1).padStart(16, "0")}`,
    username: `load${i + 1}`,
    discriminator: "0" as const,
    global_name: `Load ${i + 1}`,
    avatar: `10ad${String(i + 1).padStart(28, "0")}`,
    locale: "en-US",
    email: `load${i + 1}@sandbox.invalid`
  }))

/** The extra users of this process (read once, when the seed is loaded). */
export const EXTRA_USERS = extraUsers(Number(globalThis.process?.env?.["SANDBOX_EXTRA_USERS"] ?? 0) || 0)

export const USERS: ReadonlyArray<SeedUser> = [
  {
    id: ALICE_ID,
    username: "alice",
    discriminator: "0",
    global_name: "Alice",
    avatar: "a11ce0000000000000000000000000a1",
    locale: "en-US",
    email: "alice@sandbox.invalid"
  },
  {
    id: BOB_ID,
    username: "bob",
    discriminator: "0",
    global_name: "Bob",
    avatar: "b0b00000000000000000000000000b0b",
    locale: "en-US",
    email: "bob@sandbox.invalid"
  },
  {
    id: CAROL_ID,
    username: "carol",
    discriminator: "0",
    global_name: "Carol",
    avatar: "ca7010000000000000000000000000ca",
    locale: "en-US",
    email: "carol@sandbox.invalid"
  },
  ...EXTRA_USERS
]
