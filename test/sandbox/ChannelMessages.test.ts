/**
 * `GET /channels/{id}/messages` on the sandbox's Discord (what the worker reads to reconcile an
 * unanswered send, issue #30 item 5), in Discord's shapes, and the two faults that cut a webhook's
 * execute with no answer: `cut` (nothing posted) and `cut-after` (posted, then the connection dropped).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN, BOT2_ID, BOT2_TOKEN, SEED } from "../../src/sandbox/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"

const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const api = (path: string, init?: RequestInit) => call(`/sandbox/discord/api/v10${path}`, init)
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
const CHANNEL = SEED.ids.textChannels.s4

const newWebhook = (name: string) =>
  Effect.gen(function*() {
    const created = yield* postJson(`/sandbox/discord/api/v10/channels/${CHANNEL}/webhooks`, { name }, bot2)
    assert.strictEqual(created.status, 200, JSON.stringify(created.body))
    return { id: String(field(created.body, "id")), token: String(field(created.body, "token")) }
  })
const read = (query = "", headers: Record<string, string> = bot2, channel: string = CHANNEL) =>
  api(`/channels/${channel}/messages${query}`, { headers })
const ids = (body: unknown) => (body as Array<{ id: string }>).map((m) => m.id)

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox: a channel's messages", (it) => {
  it.effect("newest first in Discord's shape (webhook_id, the webhook as author); limit, before, after; bad queries 400", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("Reader")
      const posted: Array<string> = []
      for (const n of [1, 2, 3]) {
        const answer = yield* postJson(`/sandbox/discord/api/v10/webhooks/${hook.id}/${hook.token}?wait=true`, { content: `m${n}`, username: "Poster" })
        posted.push(String(field(answer.body, "id")))
      }
      const page = yield* read("?limit=3")
      assert.strictEqual(page.status, 200)
      const list = page.body as Array<Record<string, unknown>>
      assert.deepStrictEqual(ids(list), [posted[2], posted[1], posted[0]])
      assert.deepInclude(list[0], { content: "m3", channel_id: CHANNEL, webhook_id: hook.id, type: 0 })
      assert.deepInclude(list[0]!["author"] as object, { id: hook.id, username: "Poster", bot: true })
      assert.match(String(list[0]!["timestamp"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/)
      assert.deepStrictEqual(ids((yield* read(`?limit=2&before=${posted[2]}`)).body), [posted[1], posted[0]])
      assert.deepStrictEqual(ids((yield* read(`?limit=1&after=${posted[0]}`)).body), [posted[1]])
      assert.deepStrictEqual(ids((yield* read(`?after=${posted[0]}`)).body), [posted[2], posted[1]])
      for (const bad of ["?limit=0", "?limit=101", "?limit=x", "?before=abc"]) {
        const answer = yield* read(bad)
        assert.strictEqual(answer.status, 400, bad)
        assert.strictEqual(field(answer.body, "code"), 50035)
      }
    }))

  it.effect("a bot outside the server 403 50001; an unknown channel 404 10003; no token 401", () =>
    Effect.gen(function*() {
      // FormsBot (bot 1) is not in S4.
      const outside = yield* read("", { authorization: `Bot ${BOT1_TOKEN}` })
      assert.deepStrictEqual([outside.status, field(outside.body, "code")], [403, 50001])
      const unknown = yield* read("", bot2, "319999999999999999")
      assert.deepStrictEqual([unknown.status, field(unknown.body, "code")], [404, 10003])
      assert.strictEqual((yield* read("", {})).status, 401)
    }))

  it.effect("a bot without READ_MESSAGE_HISTORY reads an empty history (200 []), as Discord answers; with it back, the messages", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("History")
      yield* postJson(`/sandbox/discord/api/v10/webhooks/${hook.id}/${hook.token}?wait=true`, { content: "kept" })
      assert.isAtLeast(ids((yield* read()).body).length, 1)
      const deny = yield* postJson("/sandbox/discord/permissions", { guild_id: SEED.ids.servers.s4, user_id: BOT2_ID, deny: String(1n << 16n) })
      assert.strictEqual(deny.status, 200)
      const hidden = yield* read()
      yield* call("/sandbox/discord/permissions", { method: "DELETE" })
      assert.deepStrictEqual([hidden.status, hidden.body], [200, []])
      assert.isAtLeast(ids((yield* read()).body).length, 1)
    }))

  it.effect("cut: no answer and nothing posted; cut-after: no answer, but the message is posted", () =>
    Effect.gen(function*() {
      const hook = yield* newWebhook("Cut")
      const server = yield* SandboxServer
      const execute = () =>
        Effect.promise(() =>
          fetch(`${server.url}/sandbox/discord/api/v10/webhooks/${hook.id}/${hook.token}?wait=true`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content: "cut?" })
          }).then((r) => `answered ${r.status}`, (e: unknown) => `no answer: ${String((e as Error).cause ?? e)}`)
        )
      const inChannel = Effect.map(read(), (a) => (a.body as Array<{ webhook_id: string }>).filter((m) => m.webhook_id === hook.id).length)
      for (const [kind, after] of [["cut", 0], ["cut-after", 1]] as const) {
        const added = yield* postJson("/sandbox/faults", {
          route: "POST /webhooks/{id}/{token}",
          kind,
          path: `/sandbox/discord/api/v10/webhooks/${hook.id}`
        })
        assert.strictEqual(added.status, 200)
        assert.match(yield* execute(), /^no answer/, kind)
        assert.strictEqual(yield* inChannel, after, kind)
      }
      assert.strictEqual(yield* execute(), "answered 200", "one cut per fault")
      assert.strictEqual(yield* inChannel, 2)
    }))

  it.effect("enforce_nonce: a repeated nonce answers the first message and posts nothing; without it, or another nonce, a new one (JSON and multipart)", () =>
    Effect.gen(function*() {
      const bot1 = { authorization: `Bot ${BOT1_TOKEN}` }
      const channel = SEED.ids.textChannels.s1
      const post = (body: Record<string, unknown>) => postJson(`/sandbox/discord/api/v10/channels/${channel}/messages`, body, bot1)
      const multipart = (body: Record<string, unknown>) => {
        const form = new FormData()
        form.append("payload_json", JSON.stringify(body))
        form.append("files[0]", new Blob(["whole answers"], { type: "text/plain" }), "submission.txt")
        return api(`/channels/${channel}/messages`, { method: "POST", headers: bot1, body: form })
      }
      const first = yield* post({ content: "review 1", nonce: "review-n1", enforce_nonce: true })
      assert.strictEqual(first.status, 200, JSON.stringify(first.body))
      assert.strictEqual(field(first.body, "nonce"), "review-n1")
      const again = yield* post({ content: "review 1 (retry)", nonce: "review-n1", enforce_nonce: true })
      assert.deepStrictEqual([again.status, field(again.body, "id"), field(again.body, "content")], [200, field(first.body, "id"), "review 1"])
      const loose = yield* post({ content: "no enforce", nonce: "review-n1" })
      const other = yield* post({ content: "other", nonce: "review-n2", enforce_nonce: true })
      const filed = yield* multipart({ content: "with a file", nonce: "review-n3", enforce_nonce: true })
      assert.strictEqual(filed.status, 200, JSON.stringify(filed.body))
      assert.deepStrictEqual((field(filed.body, "attachments") as Array<{ filename: string }>).map((a) => a.filename), ["submission.txt"])
      const filedAgain = yield* multipart({ content: "with a file (retry)", nonce: "review-n3", enforce_nonce: true })
      assert.strictEqual(field(filedAgain.body, "id"), field(filed.body, "id"))
      const posted = new Set([first, loose, other, filed].map((a) => String(field(a.body, "id"))))
      assert.strictEqual(posted.size, 4)
      const history = (yield* api(`/channels/${channel}/messages?limit=100`, { headers: bot1 })).body as Array<{ id: string; content: string }>
      assert.deepStrictEqual(history.filter((m) => posted.has(m.id)).map((m) => m.content), ["with a file", "other", "no enforce", "review 1"])
    }))
})
