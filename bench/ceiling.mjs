// The ceiling: a bare node:http server answering the S1 scenario's exact JSON after the same bearer
// check as the gateway (the token's SHA-256 looked up in an in-memory Map). Config: a JSON file
// named by argv[2] { port, path, tokens: { <sha256 hex>: <user id> }, body }.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const config = JSON.parse(readFileSync(process.argv[2], "utf8"))
const tokens = new Map(Object.entries(config.tokens))
const body = Buffer.from(config.body)
const unauthorized = Buffer.from(JSON.stringify({ errors: [{ code: "Unauthorized", message: "The access token is not valid." }] }))

const parse = (value) => {
  if (value === undefined) return undefined
  let v = value.trim()
  if (/^bearer\s/i.test(v)) v = v.slice(6).trim()
  return v.length > 0 && v.length <= 512 && /^[\x21-\x7e]+$/.test(v) ? v : undefined
}

const server = createServer((req, res) => {
  const token = parse(req.headers["authorization"]) ?? parse(req.headers["x-access-token"])
  const user = token === undefined ? undefined : tokens.get(createHash("sha256").update(token, "utf8").digest("hex"))
  if (user === undefined) {
    res.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer error="invalid_token"' })
    return res.end(unauthorized)
  }
  if (req.url !== config.path) {
    res.writeHead(404, { "content-type": "application/json" })
    return res.end("{\"errors\":[]}")
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
  res.end(body)
})
server.listen(config.port, "127.0.0.1", () => process.stdout.write(`ready ${config.port}\n`))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
