// The conventional twin of the S2 scenario: Fastify 5 + pg. The same token lookup (SHA-256 of the
// bearer token joined with its family, live and unexpired), then the forms of a server, in the same
// JSON. Config: env PORT, DATABASE_URL; the pool has 10 connections like the gateway's.
import Fastify from "fastify"
import { createHash } from "node:crypto"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const app = Fastify({ logger: false })
const FLAGS = ["taskboard_integration", "workflow_live"]

const parse = (value) => {
  if (value === undefined) return undefined
  let v = value.trim()
  if (/^bearer\s/i.test(v)) v = v.slice(6).trim()
  return v.length > 0 && v.length <= 512 && /^[\x21-\x7e]+$/.test(v) ? v : undefined
}

const unauthorized = { errors: [{ code: "Unauthorized", message: "The access token is not valid." }] }

app.get("/api/v1/bots/:appClientId/servers/:serverId/modules/forms", async (request, reply) => {
  const token = parse(request.headers["authorization"]) ?? parse(request.headers["x-access-token"])
  if (token === undefined) return reply.code(401).send(unauthorized)
  const found = await pool.query({
    name: "resolve",
    text: `SELECT t.family_id, f.user_id, t.expires_at FROM tokens t JOIN token_families f ON f.id = t.family_id
      WHERE t.token_sha256 = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND f.revoked_at IS NULL AND t.expires_at > $2`,
    values: [createHash("sha256").update(token, "utf8").digest("hex"), new Date()]
  })
  if (found.rows.length === 0) return reply.code(401).send(unauthorized)
  const { rows } = await pool.query({
    name: "forms",
    text: `SELECT workflow_id, title, color_hex, flags FROM forms WHERE bot_id = $1 AND server_id = $2 ORDER BY workflow_id`,
    values: [request.params.appClientId, request.params.serverId]
  })
  return {
    forms: rows.map((r) => ({
      workflow_id: Number(r.workflow_id),
      taskboard_integration: r.flags?.[FLAGS[0]] === true,
      workflow_live: r.flags?.[FLAGS[1]] === true,
      title: r.title,
      color_hex: r.color_hex
    }))
  }
})

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" })
process.stdout.write(`ready ${process.env.PORT}\n`)
process.on("SIGTERM", () => app.close().then(() => pool.end()).then(() => process.exit(0)))
