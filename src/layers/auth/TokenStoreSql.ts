/**
 * TokenStore on PostgreSQL / PGlite (tables of migration 0001). Every decision that must be atomic
 * (one use of a state or temporary token, one rotation of a refresh token) is a single
 * `UPDATE … WHERE used_at IS NULL … RETURNING`: of concurrent callers exactly one gets the row.
 * Storage only: what a reused refresh token means is decided by `TokenStore.fromStorage`.
 * Every change that ends tokens (a family revoked, a rotation, platform tokens replaced) notifies
 * `REVOCATIONS_CHANNEL` in the same statement or transaction: on commit, every instance drops the
 * family from its token cache (TokenStoreListener.ts).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { UserId } from "../../domain/infra/Ids.ts"
import { now, sha256Hex, TokenStore } from "../../services/auth/TokenStore.ts"
import type { NewToken, PlatformTokensEnc, RevokedFamily, TokenKind } from "../../services/auth/TokenStore.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"
import { revocationPayload, REVOCATIONS_CHANNEL } from "./TokenStoreListener.ts"

// The one database-error policy (SqlFailure.ts). Statements carry hashes, ids and values the gateway
// made, except the client's `state` and `code_challenge` of a sign-in state, refused at the edge.
const unavailable = sqlFailure("Token storage")

interface FamilyRow {
  readonly id: string
  readonly platform_access_enc: string | null
  readonly platform_refresh_enc: string | null
  readonly platform_expires_at: Date | null
}

const platformOf = (row: FamilyRow): PlatformTokensEnc | undefined =>
  row.platform_access_enc !== null && row.platform_refresh_enc !== null && row.platform_expires_at !== null
    ? { accessEnc: row.platform_access_enc, refreshEnc: row.platform_refresh_enc, expiresAt: row.platform_expires_at }
    : undefined

export const TokenStoreSql = Layer.effect(
  TokenStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertToken = (familyId: string, kind: TokenKind, t: NewToken, codeChallenge: string | null = null) =>
      sql`INSERT INTO tokens (token_sha256, family_id, kind, code_challenge, issued_at, expires_at)
          VALUES (${sha256Hex(t.token)}, ${familyId}, ${kind}, ${codeChallenge}, ${t.issuedAt}, ${t.expiresAt})`

    // Revokes a live family, clears its platform tokens, returns what they were (for the platform revoke).
    const revokeFamilyTx = (familyId: string, at: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<FamilyRow>`
          SELECT id, platform_access_enc, platform_refresh_enc, platform_expires_at FROM token_families
          WHERE id = ${familyId} AND revoked_at IS NULL FOR UPDATE`
        const row = rows[0]
        if (row === undefined) return undefined
        yield* sql`UPDATE token_families SET revoked_at = ${at}, platform_access_enc = NULL, platform_refresh_enc = NULL
                   WHERE id = ${familyId}`
        // Heard by every instance when this commits (a data-modifying WITH runs whatever the SELECT reads).
        yield* sql`WITH ended AS (UPDATE tokens SET revoked_at = ${at} WHERE family_id = ${familyId} AND revoked_at IS NULL)
                   SELECT pg_notify(${REVOCATIONS_CHANNEL}, ${revocationPayload([familyId])})`
        return { familyId: row.id, platform: platformOf(row) } satisfies RevokedFamily
      }).pipe(sql.withTransaction)

    return TokenStore.fromStorage({
      resolveAccess: (token) =>
        Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ family_id: string; user_id: string; expires_at: Date }>`
            SELECT t.family_id, f.user_id, t.expires_at FROM tokens t JOIN token_families f ON f.id = t.family_id
            WHERE t.token_sha256 = ${sha256Hex(token)} AND t.kind = 'access' AND t.revoked_at IS NULL
              AND f.revoked_at IS NULL AND t.expires_at > ${at}`
          const row = rows[0]
          return row === undefined
            ? undefined
            : { userId: row.user_id as UserId, familyId: row.family_id, accessExpiresAt: row.expires_at }
        }).pipe(unavailable),

      familyOf: (token) =>
        Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ family_id: string }>`
            SELECT t.family_id FROM tokens t JOIN token_families f ON f.id = t.family_id
            WHERE t.token_sha256 = ${sha256Hex(token)} AND t.revoked_at IS NULL AND f.revoked_at IS NULL
              AND t.expires_at > ${at}`
          return rows[0]?.family_id
        }).pipe(unavailable),

      createSignInState: (input) =>
        sql`INSERT INTO sign_in_states (state_sha256, cookie_sha256, redirect_uri, client_state, client_code_challenge,
              platform_verifier_enc, expires_at)
            VALUES (${sha256Hex(input.state)}, ${sha256Hex(input.cookie)}, ${input.redirectUri},
              ${input.clientState ?? null}, ${input.clientCodeChallenge ?? null}, ${input.platformVerifierEnc},
              ${input.expiresAt})`.pipe(Effect.asVoid, unavailable),

      consumeSignInState: (state, cookie) =>
        Effect.gen(function*() {
          const at = yield* now
          const stateHash = sha256Hex(state)
          const cookieHash = cookie === undefined ? "" : sha256Hex(cookie)
          const consumed = yield* sql<{
            redirect_uri: string
            client_state: string | null
            client_code_challenge: string | null
            platform_verifier_enc: string
          }>`
            UPDATE sign_in_states SET used_at = ${at}
            WHERE state_sha256 = ${stateHash} AND cookie_sha256 = ${cookieHash} AND used_at IS NULL AND expires_at > ${at}
            RETURNING redirect_uri, client_state, client_code_challenge, platform_verifier_enc`
          const row = consumed[0]
          if (row !== undefined) {
            return {
              _tag: "Consumed" as const,
              state: {
                stateHash,
                redirectUri: row.redirect_uri,
                clientState: row.client_state ?? undefined,
                clientCodeChallenge: row.client_code_challenge ?? undefined,
                platformVerifierEnc: row.platform_verifier_enc
              }
            }
          }
          const known = yield* sql<{ cookie_sha256: string; used_at: Date | null; expires_at: Date }>`
            SELECT cookie_sha256, used_at, expires_at FROM sign_in_states WHERE state_sha256 = ${stateHash}`
          const k = known[0]
          const reason = k === undefined
            ? "unknown" as const
            : k.used_at !== null
            ? "used" as const
            : k.expires_at.getTime() <= at.getTime()
            ? "expired" as const
            : "cookie" as const
          return { _tag: "Refused" as const, reason }
        }).pipe(unavailable),

      createFamily: (input) =>
        Effect.gen(function*() {
          const u = input.user
          yield* sql`INSERT INTO users (id, username, discriminator, global_name, avatar, locale, updated_at)
            VALUES (${u.id}, ${u.username}, ${u.discriminator}, ${u.globalName}, ${u.avatar}, ${u.locale}, ${input.temporary.issuedAt})
            ON CONFLICT (id) DO UPDATE SET username = EXCLUDED.username, discriminator = EXCLUDED.discriminator,
              global_name = EXCLUDED.global_name, avatar = EXCLUDED.avatar, locale = EXCLUDED.locale,
              updated_at = EXCLUDED.updated_at`
          yield* sql`INSERT INTO token_families (id, user_id, platform_access_enc, platform_refresh_enc, platform_expires_at, created_at)
            VALUES (${input.familyId}, ${u.id}, ${input.platform.accessEnc}, ${input.platform.refreshEnc},
              ${input.platform.expiresAt}, ${input.temporary.issuedAt})`
          yield* insertToken(input.familyId, "temporary", input.temporary, input.codeChallenge ?? null)
        }).pipe(sql.withTransaction, unavailable),

      consumeTemporary: (token) =>
        Effect.gen(function*() {
          const at = yield* now
          const hash = sha256Hex(token)
          const consumed = yield* sql<{ family_id: string; code_challenge: string | null }>`
            UPDATE tokens SET used_at = ${at}
            WHERE token_sha256 = ${hash} AND kind = 'temporary' AND used_at IS NULL AND revoked_at IS NULL
              AND expires_at > ${at}
              AND family_id IN (SELECT id FROM token_families WHERE revoked_at IS NULL)
            RETURNING family_id, code_challenge`
          const row = consumed[0]
          if (row !== undefined) {
            return { _tag: "Consumed" as const, familyId: row.family_id, codeChallenge: row.code_challenge ?? undefined }
          }
          const used = yield* sql<{ family_id: string }>`
            SELECT family_id FROM tokens WHERE token_sha256 = ${hash} AND kind = 'temporary' AND used_at IS NOT NULL`
          return used[0] === undefined
            ? { _tag: "Invalid" as const }
            : { _tag: "Replayed" as const, familyId: used[0].family_id }
        }).pipe(unavailable),

      issuePair: (familyId, pair) =>
        Effect.gen(function*() {
          yield* insertToken(familyId, "access", pair.access)
          yield* insertToken(familyId, "refresh", pair.refresh)
        }).pipe(sql.withTransaction, unavailable),

      rotateRefresh: (refreshToken, next) =>
        Effect.gen(function*() {
          const at = yield* now
          const hash = sha256Hex(refreshToken)
          const rotated = yield* Effect.gen(function*() {
            const rows = yield* sql<{ family_id: string }>`
              UPDATE tokens SET used_at = ${at}
              WHERE token_sha256 = ${hash} AND kind = 'refresh' AND used_at IS NULL AND revoked_at IS NULL
                AND expires_at > ${at}
                AND family_id IN (SELECT id FROM token_families WHERE revoked_at IS NULL)
              RETURNING family_id`
            const row = rows[0]
            if (row === undefined) return undefined
            // The previous access tokens end; every instance hears of it when this commits.
            yield* sql`WITH ended AS (UPDATE tokens SET revoked_at = ${at}
                         WHERE family_id = ${row.family_id} AND kind = 'access' AND revoked_at IS NULL)
                       SELECT pg_notify(${REVOCATIONS_CHANNEL}, ${revocationPayload([row.family_id])})`
            yield* insertToken(row.family_id, "access", next.access)
            yield* insertToken(row.family_id, "refresh", next.refresh)
            return row.family_id
          }).pipe(sql.withTransaction)
          if (rotated !== undefined) return { _tag: "Rotated" as const, familyId: rotated }
          const used = yield* sql<{ family_id: string; used_at: Date }>`
            SELECT family_id, used_at FROM tokens WHERE token_sha256 = ${hash} AND kind = 'refresh' AND used_at IS NOT NULL`
          if (used[0] === undefined) return { _tag: "Invalid" as const }
          return { _tag: "AlreadyRotated" as const, familyId: used[0].family_id, rotatedAt: used[0].used_at }
        }).pipe(unavailable),

      checkAccess: (token) =>
        Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ family_id: string; issued_at: Date; expires_at: Date }>`
            SELECT t.family_id, t.issued_at, t.expires_at FROM tokens t JOIN token_families f ON f.id = t.family_id
            WHERE t.token_sha256 = ${sha256Hex(token)} AND t.kind = 'access' AND t.revoked_at IS NULL
              AND f.revoked_at IS NULL`
          const row = rows[0]
          return row === undefined
            ? undefined
            : { familyId: row.family_id, issuedAt: row.issued_at, expiresAt: row.expires_at, expired: row.expires_at.getTime() <= at.getTime() }
        }).pipe(unavailable),

      revokeByAccess: (token) =>
        Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ family_id: string }>`
            SELECT family_id FROM tokens WHERE token_sha256 = ${sha256Hex(token)} AND kind = 'access' AND revoked_at IS NULL`
          if (rows[0] === undefined) return undefined
          return yield* revokeFamilyTx(rows[0].family_id, at)
        }).pipe(unavailable),

      revokeFamily: (familyId) => Effect.flatMap(now, (at) => revokeFamilyTx(familyId, at)).pipe(unavailable),

      platformTokens: (familyId) =>
        sql<FamilyRow>`
          SELECT id, platform_access_enc, platform_refresh_enc, platform_expires_at FROM token_families
          WHERE id = ${familyId} AND revoked_at IS NULL`.pipe(
          Effect.map((rows) => rows[0] === undefined ? undefined : platformOf(rows[0])),
          unavailable
        ),

      claimPlatformRefresh: (familyId, previousAccessEnc, until) =>
        Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ id: string }>`
            UPDATE token_families SET platform_refresh_claimed_until = ${until}
            WHERE id = ${familyId} AND revoked_at IS NULL AND platform_access_enc = ${previousAccessEnc}
              AND (platform_refresh_claimed_until IS NULL OR platform_refresh_claimed_until <= ${at})
            RETURNING id`
          return rows.length === 1
        }).pipe(unavailable),

      releasePlatformRefresh: (familyId, until) =>
        sql`UPDATE token_families SET platform_refresh_claimed_until = NULL
            WHERE id = ${familyId} AND platform_refresh_claimed_until = ${until}`.pipe(Effect.asVoid, unavailable),

      // The other instances drop their copy of the family's platform tokens (and its cached access tokens).
      replacePlatformTokens: (familyId, previousAccessEnc, next) =>
        sql<{ id: string }>`
          WITH replaced AS (
            UPDATE token_families SET platform_access_enc = ${next.accessEnc}, platform_refresh_enc = ${next.refreshEnc},
              platform_expires_at = ${next.expiresAt}, platform_refresh_claimed_until = NULL
            WHERE id = ${familyId} AND revoked_at IS NULL AND platform_access_enc = ${previousAccessEnc}
            RETURNING id)
          SELECT id, pg_notify(${REVOCATIONS_CHANNEL}, ${revocationPayload([familyId])}) FROM replaced`.pipe(
          Effect.map((rows) => rows.length === 1),
          unavailable
        )
    })
  })
)
