/**
 * At rest: after sign-ins, refreshes and a revocation, no table holds a gateway token, a sign-in
 * secret or a platform token in any encoding (raw, base64, base64url, hex).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Auth } from "../../src/services/auth/Auth.ts"
import { s256 } from "../../src/services/auth/Pkce.ts"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { newSecret } from "../../src/services/auth/TokenStore.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { authLayer, makeFakePlatform } from "./AuthFixtures.ts"

const encodings = (secret: string): Array<string> => {
  const bytes = Buffer.from(secret, "utf8")
  const out = [secret, bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex")]
  // The random part alone too (what follows the `bmg_xx_` prefix), and its decoded bytes.
  const m = /^(?:bmg_[a-z]{2}_|plat_[a-z]{2}_)(.+)$/.exec(secret)
  if (m !== null) {
    const raw = Buffer.from(m[1]!, "base64url")
    out.push(m[1]!, raw.toString("base64"), raw.toString("hex"))
  }
  return out.map((s) => s.replace(/=+$/, "")).filter((s) => s.length >= 16)
}

for (const kind of dbKinds) {
  const fake = makeFakePlatform()
  layer(authLayer(TokenStoreSql.pipe(Layer.provideMerge(testDb(kind))), fake).pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true })(
    `secrets at rest (${kind})`,
    (it) => {
      it.effect("no token of any kind in any table, in any encoding", () =>
        Effect.gen(function*() {
          const auth = yield* Auth
          const sql = yield* SqlClient.SqlClient
          const secrets: Array<string> = []
          for (let i = 0; i < 3; i++) {
            const verifier = newSecret()
            const login = yield* auth.login({
              redirectUri: "https://client.example/callback",
              state: `client-${i}`,
              codeChallenge: s256(verifier),
              codeChallengeMethod: "S256"
            })
            const back = fake.approve(login.location)
            secrets.push(login.cookie.value, back.state, back.code, verifier)
            const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
            const code = new URL(location).searchParams.get("code")!
            const t = yield* auth.exchange({ authorization: code, codeVerifier: verifier })
            const r = yield* auth.refresh(t.refresh_token)
            secrets.push(code, t.access_token, t.refresh_token, r.access_token, r.refresh_token)
            if (i === 2) yield* auth.revoke(r.access_token)
          }
          secrets.push(...fake.issued)
          assert.strictEqual(fake.issued.length, 6)

          const tables = yield* sql<{ table_name: string }>`
            SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
          let dump = ""
          for (const { table_name } of tables) {
            const rows = yield* sql.unsafe<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`)
            dump += rows.map((r) => r.j).join("\n") + "\n"
          }
          assert.include(dump, "100000000000000001", "the dump does contain the sign-ins")
          assert.include(dump, "platform_access_enc")
          // Nor in a log line (the migration's, a refused revocation's, …), kept here instead of printed.
          const logs = JSON.stringify(yield* CapturedLogs.use((c) => c.lines))
          for (const secret of secrets) {
            for (const form of encodings(secret)) {
              assert.notInclude(dump, form, "a secret is stored in clear")
              assert.notInclude(logs, form, "a secret is logged")
            }
          }
        }), 60_000)
    }
  )
}
