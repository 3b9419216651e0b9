/**
 * A bot's Interactions Endpoint for the player's tests: verifies each request's Ed25519 signature
 * with node:crypto and the public key the sandbox lists (401 when it does not verify or the timestamp
 * is more than 5 minutes off, as a bot must), records what it received, and answers with the
 * handler the test sets.
 */
import { createPublicKey, verify } from "node:crypto"
import type { KeyObject } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly botId: string
  readonly raw: string
  readonly headers: Readonly<Record<string, string>>
  readonly interaction: Readonly<Record<string, unknown>>
}

export interface Answer {
  readonly status?: number
  readonly body?: unknown
  readonly delayMs?: number
}

export type Handler = (received: Received) => Promise<Answer> | Answer

/** Ed25519 SPKI DER prefix (RFC 8410): the 32 raw bytes of the key follow. */
const SPKI_ED25519 = Buffer.from("302a300506032b6570032100", "hex")

export const keyFromHex = (hex: string): KeyObject =>
  createPublicKey({ key: Buffer.concat([SPKI_ED25519, Buffer.from(hex, "hex")]), format: "der", type: "spki" })

export const verifies = (key: KeyObject, timestamp: string, raw: string, signatureHex: string): boolean => {
  try {
    return verify(null, Buffer.from(timestamp + raw, "utf8"), key, Buffer.from(signatureHex, "hex"))
  } catch {
    return false
  }
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Bot id → its public key (hex), as `GET /sandbox` lists it. */
  readonly keys: Map<string, string>
  handler: Handler
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<Receiver> => {
  const receiver: Omit<Receiver, "url" | "close"> = {
    received: [],
    keys: new Map(),
    handler: () => ({ status: 500 })
  }
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      const botId = (request.url ?? "").split("/").at(-1) ?? ""
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
      const timestamp = headers["x-signature-timestamp"] ?? ""
      const hex = receiver.keys.get(botId)
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300
      if (hex === undefined || !fresh || !verifies(keyFromHex(hex), timestamp, raw, headers["x-signature-ed25519"] ?? "")) {
        response.writeHead(401).end("invalid request signature")
        return
      }
      const received = { botId, raw, headers, interaction: JSON.parse(raw) as Readonly<Record<string, unknown>> }
      receiver.received.push(received)
      void Promise.resolve(receiver.handler(received)).then(async (answer) => {
        if (answer.delayMs !== undefined) await new Promise((r) => setTimeout(r, answer.delayMs))
        const status = answer.status ?? 200
        if (answer.body === undefined) response.writeHead(status).end()
        else response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer.body))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}
