/**
 * The refresh race over HTTP (decisions.md "Sign-in and tokens"): of 50 concurrent refreshes with
 * one refresh token exactly one succeeds, and the losers (a rotated token presented again within
 * 10 s of its rotation) revoke nothing: the winner's new pair keeps working. (A reuse after the
 * 10 s revokes the family: test/auth/AuthTokens.test.ts, under the TestClock.)
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, signIn, TestApp } from "../utils/TestApp.ts"

const refresh = (token: string) =>
  Effect.gen(function*() {
    const res = yield* raw({ method: "POST", headers: { "x-refresh-token": token } }, "/auth/idp/token/refresh")
    return { status: res.status, body: yield* json(res) }
  })

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }).pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true, timeout: 60_000 })(`refresh race (${db})`, (it) => {
    it.effect("50 concurrent refreshes → exactly one 200; the winner's pair still works; the losers get 401", () =>
      Effect.gen(function*() {
        const first = yield* signIn(ALICE_ID)
        const answers = yield* Effect.forEach(Array.from({ length: 50 }), () => refresh(first.refresh_token), { concurrency: "unbounded" })
        const winners = answers.filter((a) => a.status === 200)
        assert.strictEqual(winners.length, 1, JSON.stringify(answers.map((a) => a.status)))
        assert.isTrue(answers.every((a) => a.status === 200 || a.status === 401), JSON.stringify(answers.map((a) => a.status)))
        const pair = winners[0]!.body as { access_token: string; refresh_token: string }

        const user = yield* raw({ token: pair.access_token }, "/api/v1/user")
        assert.strictEqual(user.status, 200, "the winner's access token works")
        assert.strictEqual((yield* raw({ token: first.access_token }, "/api/v1/user")).status, 401, "the old access token does not")
        const again = yield* refresh(pair.refresh_token)
        assert.strictEqual(again.status, 200, "the winner's refresh token works")
        assert.strictEqual((yield* raw({ token: again.body.access_token }, "/api/v1/user")).status, 200)
        const loser = answers.find((a) => a.status === 401)!
        assert.match(loser.body.errors[0].message, /rotated moments ago/, "the loser is told why, in words it can act on")
        // Fifty refreshes racing, some refused: no token in any line the gateway logged meanwhile.
        const logs = JSON.stringify(yield* CapturedLogs.use((c) => c.lines))
        for (const secret of [first.access_token, first.refresh_token, pair.access_token, pair.refresh_token]) assert.notInclude(logs, secret)
      }))
  })
}
