/**
 * `POST /interactions/{appClientId}` through HTTP, as the platform sends it (forms-runtime.md §1):
 * the bots' keys read at start, `/submit` registered once, PING, and every refusal — unsigned,
 * forged, stale, unknown bot (401, nothing stored), a replayed id, a body over 1 MiB, a key reset.
 * The platform is the sandbox's, mounted in the app: each bot's key pair is its application's, the
 * commands registered are read back from it, the calls counted by `GET /sandbox/stats`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BOT1_ID, BOT1_TOKEN, BOT2_ID, BOT2_TOKEN, BOB_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { FRESH_MIN_MS } from "../../src/layers/submissions/CachedBotApplications.ts"
import { BotApplications } from "../../src/services/submissions/BotApplications.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp } from "../utils/TestApp.ts"
import { interaction, send, waitForKeys } from "./InteractionClient.ts"
import { botSigner, makeSigner, sandboxSigner as signer } from "./InteractionSigner.ts"
import { callsTo, eventuallyEffect } from "./PlayerFixtures.ts"

const bob = { userId: BOB_ID, username: "bob" }

const seenCount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM interactions_seen`
  return rows[0]!.n
})

/** The commands the platform holds for a bot's application, read as the bot. */
const commandsOf = (botId: string, token: string) =>
  Effect.map(
    Effect.flatMap(raw({ headers: { authorization: `Bot ${token}` } }, `/sandbox/discord/api/v10/applications/${botId}/commands`), json),
    (commands) => commands as ReadonlyArray<{ name: string; type: number; contexts: Array<number> }>
  )

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(
    `interactions endpoint on ${kind}`,
    (it) => {
      it.effect("stores each bot's key at start and registers /submit once per bot", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          // The keys stored are the applications' own, as the platform lists them.
          const listed = (yield* json(yield* raw({}, "/sandbox"))).bots as ReadonlyArray<{ id: string; public_key: string }>
          const apps = yield* BotApplications
          for (const bot of [BOT1_ID, BOT2_ID]) {
            const stored = yield* eventuallyEffect(apps.byBot(bot))
            assert.strictEqual(stored.publicKey, listed.find((b) => b.id === bot)?.public_key)
            assert.strictEqual(stored.publicKey, botSigner(bot).publicKeyHex)
          }
          for (const [bot, token] of [[BOT1_ID, BOT1_TOKEN], [BOT2_ID, BOT2_TOKEN]] as const) {
            const commands = yield* eventuallyEffect(Effect.map(commandsOf(bot, token), (cs) => (cs.length > 0 ? cs : undefined)))
            assert.deepStrictEqual(commands.map((c) => [c.name, c.type, c.contexts]), [["submit", 1, [0]]])
          }
          // Once per bot: two bulk overwrites in all, and each application read once.
          assert.strictEqual(yield* callsTo("PUT /applications/{application_id}/commands"), 2)
          assert.strictEqual(yield* callsTo("GET /applications/@me"), 2)
        }))

      it.effect("PING → PONG", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const r = yield* send(BOT1_ID, { id: "2", application_id: BOT1_ID, type: 1, token: "t", version: 1 }, { signer })
          assert.strictEqual(r.status, 200)
          assert.deepStrictEqual(r.body, { type: 1 })
        }))

      it.effect("unsigned, forged, stale, tampered or for an unknown bot: 401 in the envelope, nothing stored", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const before = yield* seenCount
          const body = interaction(BOT1_ID, S1_ID, bob, 2, { name: "submit", type: 1 })
          const text = JSON.stringify(body)
          const now = Math.floor(Date.now() / 1000)
          const cases = [
            yield* send(BOT1_ID, body),
            yield* send(BOT1_ID, body, { signer: makeSigner() }),
            yield* send(BOT1_ID, body, { signer: botSigner(BOT2_ID) }),
            yield* send(BOT1_ID, body, { signer, timestamp: String(now - 400) }),
            yield* send(BOT1_ID, body, { signer, timestamp: String(now + 400) }),
            yield* send(BOT1_ID, text + " ", { headers: signer.headers(text) }),
            yield* send(BOT1_ID, body, { headers: { ...signer.headers(text), "x-signature-ed25519": "zz" } }),
            yield* send("200000000000000099", body, { signer }),
            yield* send("not-a-bot", body, { signer })
          ]
          for (const r of cases) {
            assert.strictEqual(r.status, 401)
            assert.strictEqual(r.body.errors?.[0]?.code, "Unauthorized")
          }
          assert.strictEqual(yield* seenCount, before)
        }))

      it.effect("a timestamp 4 minutes off is still the platform's", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const body = interaction(BOT1_ID, S1_ID, bob, 2, { name: "submit", type: 1 })
          const r = yield* send(BOT1_ID, body, { signer, timestamp: String(Math.floor(Date.now() / 1000) - 240) })
          assert.strictEqual(r.status, 200)
          assert.strictEqual(r.body.type, 4)
        }))

      it.effect("an interaction id seen before changes nothing", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const body = interaction(BOT1_ID, S1_ID, bob, 2, { name: "submit", type: 1 })
          const first = yield* send(BOT1_ID, body, { signer })
          const before = yield* seenCount
          const again = yield* send(BOT1_ID, body, { signer })
          assert.strictEqual(first.status, 200)
          assert.strictEqual(again.status, 200)
          assert.strictEqual(again.body.data?.content, "This interaction was already handled.")
          assert.strictEqual(again.body.data?.flags, 64)
          assert.strictEqual(yield* seenCount, before)
        }))

      it.effect("a body over 1 MiB → 413; a signed body that is no interaction → 400", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const big = JSON.stringify({ pad: "x".repeat(1024 * 1024) })
          const r = yield* send(BOT1_ID, big, { signer })
          assert.strictEqual(r.status, 413)
          assert.strictEqual(r.body.errors?.[0]?.code, "Payload Too Large")
          const junk = yield* send(BOT1_ID, "{not json", { signer })
          assert.strictEqual(junk.status, 400)
          const other = yield* send(BOT1_ID, { ...interaction(BOT2_ID, S1_ID, bob, 2, { name: "submit" }) }, { signer })
          assert.strictEqual(other.status, 400)
        }))

      it.effect("a key reset while the old key is kept: the new key is taken at once, the old one refused", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const sql = yield* SqlClient.SqlClient
          const body = () => interaction(BOT1_ID, S1_ID, bob, 2, { name: "submit", type: 1 })
          // Answered with the old key: the endpoint keeps it now. (A refused signature reads the
          // stored key again at most once per FRESH_MIN_MS: the forged ones of the tests before have.)
          assert.strictEqual((yield* send(BOT1_ID, body(), { signer })).status, 200)
          yield* Effect.sleep(FRESH_MIN_MS)
          const reset = makeSigner()
          yield* sql`UPDATE bots SET public_key = ${reset.publicKeyHex} WHERE id = ${BOT1_ID}`
          const renewed = yield* send(BOT1_ID, body(), { signer: reset })
          const old = yield* send(BOT1_ID, body(), { signer })
          yield* sql`UPDATE bots SET public_key = ${signer.publicKeyHex} WHERE id = ${BOT1_ID}`
          assert.strictEqual(renewed.status, 200)
          assert.strictEqual(renewed.body.type, 4)
          assert.strictEqual(old.status, 401)
          assert.strictEqual(old.body.errors?.[0]?.code, "Unauthorized")
        }))
    }
  )
}
