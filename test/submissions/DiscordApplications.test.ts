/**
 * The live client's calls of the forms runtime (layers/platform/discord/DiscordApplications.ts) on the wire,
 * against a stand-in server that records what it receives: methods, paths, the bot's authorization,
 * JSON bodies, a delete (publications), and a message with a file as the platform takes it (multipart: `payload_json`, `files[0]`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"

interface Seen {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly contentType: string
  readonly body: string
}

const standIn = () =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; seen: Array<Seen>; close: () => void }>((resolve) => {
        const seen: Array<Seen> = []
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks).toString("utf8") })
            res.setHeader("content-type", "application/json")
            if (req.url === "/api/v10/applications/@me") res.end(JSON.stringify({ id: "200000000000000001", verify_key: "ab".repeat(32), name: "x" }))
            else if (req.url?.endsWith("/commands")) res.end("[]")
            else res.end(JSON.stringify({ id: "555", channel_id: "1" }))
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v10`, seen, close: () => server.close() }))
      })
    ),
    (s) => Effect.sync(s.close)
  )

describe("DiscordApplications on the wire", () => {
  it.live("application, commands, a message with and without a file, an edit, a delete", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* standIn()
      const token = Redacted.make("bot-token")
      const run = Effect.gen(function*() {
        const chat = yield* ChatPlatform
        const app = yield* chat.getApplication(token)
        assert.deepStrictEqual(app, { id: "200000000000000001", verify_key: "ab".repeat(32) })
        yield* chat.putCommands(token, app.id, [{ name: "submit", type: 1 }])
        assert.strictEqual(yield* chat.createMessage(token, "42", { content: "hi", nonce: "n1", enforce_nonce: true }), "555")
        yield* chat.createMessage(token, "42", {
          content: "with file",
          attachments: [{ id: 0, filename: "s.txt" }],
          files: [{ filename: "s.txt", content: "the whole submission" }]
        })
        yield* chat.editMessage(token, "42", "555", { content: "edited", components: [] })
        yield* chat.deleteMessage(token, "42", "555")
      }).pipe(Effect.provide(ChatPlatformDiscord.layer({ baseUrl: server.url, clientId: "c", clientSecret: Redacted.make("s") })), Effect.provide(FetchHttpClient.layer))
      yield* run
      const [app, commands, plain, withFile, edit, removed] = server.seen
      assert.deepStrictEqual([app!.method, app!.url, app!.authorization], ["GET", "/api/v10/applications/@me", "Bot bot-token"])
      assert.deepStrictEqual([commands!.method, commands!.url], ["PUT", "/api/v10/applications/200000000000000001/commands"])
      assert.deepStrictEqual(JSON.parse(commands!.body), [{ name: "submit", type: 1 }])
      assert.deepStrictEqual([plain!.method, plain!.url], ["POST", "/api/v10/channels/42/messages"])
      assert.match(plain!.contentType, /^application\/json/)
      assert.deepStrictEqual(JSON.parse(plain!.body), { content: "hi", nonce: "n1", enforce_nonce: true })
      assert.match(withFile!.contentType, /^multipart\/form-data; boundary=/)
      assert.include(withFile!.body, `name="payload_json"`)
      assert.include(withFile!.body, JSON.stringify({ content: "with file", attachments: [{ id: 0, filename: "s.txt" }] }))
      assert.include(withFile!.body, `name="files[0]"; filename="s.txt"`)
      assert.include(withFile!.body, "the whole submission")
      assert.deepStrictEqual([edit!.method, edit!.url], ["PATCH", "/api/v10/channels/42/messages/555"])
      assert.deepStrictEqual(JSON.parse(edit!.body), { content: "edited", components: [] })
      assert.deepStrictEqual([removed!.method, removed!.url, removed!.authorization, removed!.body], ["DELETE", "/api/v10/channels/42/messages/555", "Bot bot-token", ""])
    })))
})
