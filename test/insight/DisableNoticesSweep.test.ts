/**
 * The disable notices' sweep on each database (services/delivery/DisableNotices.ts over DisableNoticesSql):
 * a notice per disable (not per status write), one message per user per hour (whatever the bots of
 * the feeds: sent by the bot of the oldest notice, or the next one when it cannot) with the rest
 * grouped into the next once the hour is over, a message the platform could not take now sent by
 * a later sweep, a refused one not retried, no message for a feed nobody is known to have created.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { DisableNoticesSql } from "../../src/layers/delivery/DisableNoticesSql.ts"
import { ChatPlatform, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DisableNotices } from "../../src/services/delivery/DisableNotices.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const BOT = "200000000000000009"
const BOT_B = "200000000000000010"
const sent: Array<{ token: string; userId: string; content: string }> = []
/** What the next sends answer: a message id, or a failure. */
const answers: Array<"ok" | "503" | "403"> = []

const Platform = Layer.succeed(ChatPlatform, {
  getGuild: (_token: Redacted.Redacted<string>, id: string) => Effect.succeed({ id, name: `Server ${id.slice(-1)}` }),
  sendDirectMessage: (token: Redacted.Redacted<string>, userId: string, body: { content?: string }) => {
    const answer = answers.shift() ?? "ok"
    if (answer === "503") return Effect.fail(ServiceUnavailable.of("down", 5))
    if (answer === "403") return Effect.fail(new PlatformRejected({ status: 403, message: "Cannot send messages to this user", code: 50007 }))
    sent.push({ token: Redacted.value(token), userId, content: body.content ?? "" })
    return Effect.succeed(`35${sent.length}`)
  }
} as unknown as ChatPlatform["Service"])

const Env = (kind: (typeof dbKinds)[number]) =>
  DisableNotices.layer.pipe(
    Layer.provideMerge(DisableNoticesSql),
    Layer.provideMerge(Platform),
    Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
    Layer.provideMerge(testDb(kind)),
    // The refusals and outages these tests provoke are logged (warnings): kept, and checked.
    Layer.provideMerge(CapturedLogs.layer)
  )

/** The warnings logged about `user`'s notices, by message. */
const warningsFor = (user: string, text: string) =>
  Effect.map(logged(text), (lines) => lines.filter((l) => l.annotations["user"] === user))

/** A feed of `bot` on server `server`, created by `creator` (its audit entry), or by nobody known. */
const feed = (server: string, creator: string | null, bot = BOT) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: unknown }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options,
        webhook_id, webhook_token_enc, webhook_name, webhook_channel_id)
      VALUES (${bot}, ${server}, 'forum', ${`Sub${Math.random()}`}, '{}', 'w', 't', 'n', 'c') RETURNING id`
    const id = String(rows[0]!.id)
    if (creator !== null) {
      yield* sql`INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, module_name, item_identifier, event_type, event_string)
        VALUES (${bot}, ${server}, ${creator}, 'someone', 'forum', ${Number(id)}, 'PUSH', ${`Created forum feed ${id}`})`
    }
    return id
  })

const disable = (id: string, reason: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO feed_status (feed_id, state, reason) VALUES (${id}, 'disabled', ${reason})
      ON CONFLICT (feed_id) DO UPDATE SET state = 'disabled', reason = ${reason}`)

const registerBots = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher
  for (const [id, token] of [[BOT, "bot-token"], [BOT_B, "bot-b-token"]] as const) {
    yield* sql`INSERT INTO bots (id, name, icon, token_enc)
      VALUES (${id}, ${`Bot ${id.slice(-2)}`}, NULL, ${yield* cipher.encrypt(Redacted.make(token), `bot:${id}:token`)})
      ON CONFLICT (id) DO NOTHING`
  }
})

const hourPassed = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE feed_notice_users SET last_sent_at = now() - interval '61 minutes' WHERE user_id = ${userId}`)

for (const kind of dbKinds) {
  layer(Env(kind), { excludeTestServices: true, timeout: 60_000 })(`disable notices sweep (${kind})`, (it) => {
    it.effect("one per user an hour, the rest grouped after it; retried after an outage; refused ones dropped", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const notices = yield* DisableNotices
        const user = `u-${kind}`
        sent.length = 0
        yield* registerBots
        const [a, b, c] = [yield* feed("301", user), yield* feed("302", user), yield* feed("301", user)]
        const orphan = yield* feed("301", null)

        yield* disable(a, "Reason A.")
        yield* disable(a, "Reason A again.") // still disabled: no second notice
        yield* disable(orphan, "Nobody to tell.")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 1, waiting: 0, dropped: 1 })
        assert.strictEqual(sent.length, 1)
        assert.deepInclude(sent[0]!, { token: "bot-token", userId: user })
        assert.include(sent[0]!.content, `forum feed ${a} (`)
        assert.include(sent[0]!.content, "on the server \"Server 1\": Reason A.")

        yield* disable(b, "Reason B.")
        yield* disable(c, "Reason C.")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 0, waiting: 2, dropped: 0 }, "within the hour: they wait")
        assert.strictEqual(sent.length, 1)

        yield* hourPassed(user)
        answers.push("503")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 0, waiting: 2, dropped: 0 }, "not taken now: released")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 1, waiting: 0, dropped: 0 }, "the next sweep sends them")
        assert.strictEqual(sent.length, 2)
        assert.lengthOf(yield* warningsFor(user, "disable notice not sent now"), 1, "the outage is logged once")
        assert.include(sent[1]!.content, "2 of your feeds were disabled")
        assert.include(sent[1]!.content, `forum feed ${b} (`)
        assert.include(sent[1]!.content, `forum feed ${c} (`)
        assert.include(sent[1]!.content, "\"Server 2\": Reason B.")
        assert.notInclude(sent[1]!.content, "Reason A")

        // Re-enabled and disabled again, the hour over, the user refusing DMs: not retried.
        yield* sql`UPDATE feed_status SET state = 'active' WHERE feed_id = ${a}`
        yield* disable(a, "Reason A, later.")
        yield* hourPassed(user)
        answers.push("403")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 0, waiting: 0, dropped: 1 })
        assert.deepStrictEqual(yield* notices.sweep, { sent: 0, waiting: 0, dropped: 0 }, "not retried")
        assert.strictEqual(sent.length, 2)
        const refused = yield* warningsFor(user, "disable notice refused by the chat platform")
        assert.deepStrictEqual(refused.map((l) => [l.annotations["bot"], l.annotations["status"]]), [[BOT, 403]])
        const logs = JSON.stringify(yield* CapturedLogs.use((c) => c.lines))
        assert.notInclude(logs, "bot-token", "a bot's token is never logged")

        // Two workers sweeping at once: one message.
        const other = `${user}-2`
        yield* disable(yield* feed("303", other), "Reason D.")
        const both = yield* Effect.all([notices.sweep, notices.sweep], { concurrency: 2 })
        assert.strictEqual(both[0].sent + both[1].sent, 1, JSON.stringify(both))
        assert.deepStrictEqual(sent.slice(2).map((m) => m.userId), [other])
      }))

    it.effect("per user, not per bot: feeds of two bots → one DM an hour, from the bot of the oldest notice; another bot when it is refused", () =>
      Effect.gen(function*() {
        const notices = yield* DisableNotices
        yield* registerBots
        yield* notices.sweep // whatever the first test left
        sent.length = 0
        const user = `multi-${kind}`
        const onB = yield* feed("311", user, BOT_B)
        const onA = yield* feed("312", user, BOT)
        yield* disable(onB, "Reason on bot B.")
        yield* disable(onA, "Reason on bot A.")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 1, waiting: 0, dropped: 0 })
        assert.strictEqual(sent.length, 1)
        assert.deepInclude(sent[0]!, { token: "bot-b-token", userId: user }, "the bot of the oldest notice sends")
        assert.include(sent[0]!.content, "2 of your feeds were disabled")
        assert.include(sent[0]!.content, "\"Server 1\": Reason on bot B.")
        assert.include(sent[0]!.content, "\"Server 2\": Reason on bot A.")

        // Within the hour, another bot's feed: no DM from that bot either.
        yield* disable(yield* feed("313", user, BOT), "Reason A2.")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 0, waiting: 1, dropped: 0 })
        assert.strictEqual(sent.length, 1)

        // The hour over; the oldest notice's bot (A here) is refused: bot B sends instead, once.
        yield* disable(yield* feed("314", user, BOT_B), "Reason B2.")
        yield* hourPassed(user)
        answers.push("403")
        assert.deepStrictEqual(yield* notices.sweep, { sent: 1, waiting: 0, dropped: 0 })
        assert.strictEqual(sent.length, 2)
        assert.deepInclude(sent[1]!, { token: "bot-b-token", userId: user })
        assert.include(sent[1]!.content, "Reason A2.")
        assert.include(sent[1]!.content, "Reason B2.")
        const refused = yield* warningsFor(user, "disable notice refused by the chat platform")
        assert.deepStrictEqual(refused.map((l) => l.annotations["bot"]), [BOT], "bot A's refusal is logged; B's send is not")
      }))
  })
}
