/**
 * Issue #12 at the HTTP edge: secrets (webhook tokens, codes, states) never in a log line, in
 * particular the access log; and the redaction rules behind it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { redactText, redactUrl } from "../../src/services/infra/Redact.ts"
import { raw } from "../utils/TestApp.ts"
import { text } from "./ContractFixtures.ts"
import { CapturedApp, LOGIN, MODULES } from "./HardeningFixtures.ts"

const accessLines = (lines: ReadonlyArray<string>) =>
  lines.map((l) => JSON.parse(l) as { message: unknown; level: string; annotations: Record<string, unknown> }).filter((l) => l.message === "request")

const logs: Array<string> = []
// At Debug: the sandbox's routes log their access lines there (an idle gateway's polls), and they too are redacted.
layer(CapturedApp(logs, {}, "Debug"), { excludeTestServices: true, timeout: 60_000 })("secrets in logs", (it) => {
  it.effect("the access log redacts webhook tokens in paths and secret query values", () =>
    Effect.gen(function*() {
      const WEBHOOK_TOKEN = "wHk-SeCrEt_tOkEn_0123456789abcdefghijklmnopqrstuv"
      const targets = [
        `/sandbox/discord/api/v10/webhooks/330000000000000001/${WEBHOOK_TOKEN}?wait=true`,
        `/sandbox/discord/api/v10/webhooks/330000000000000001/${WEBHOOK_TOKEN}/messages/@original`,
        `/api/webhooks/330000000000000001/${WEBHOOK_TOKEN}`,
        "/auth/idp/callback?code=bmg_tt_CoDeSeCrEt42&state=StAtEsEcReT42",
        `${LOGIN}&state=StAtEsEcReT42&code_challenge=ChAlLeNgE0123456789012345678901234567890123`,
        "/sandbox/callback?code=bmg_tt_CoDeSeCrEt42",
        "/sandbox/taskboard/1/members/me/boards?key=KeYsEcReT42&token=ToKeNsEcReT42"
      ]
      for (const target of targets) {
        const res = yield* raw(
          target.includes("webhooks") ? { method: "POST", headers: { "content-type": "application/json" }, body: "{}" } : {},
          target
        )
        yield* text(res)
      }
      const all = logs.join("\n")
      for (const secret of [WEBHOOK_TOKEN, "CoDeSeCrEt42", "StAtEsEcReT42", "ChAlLeNgE", "KeYsEcReT42", "ToKeNsEcReT42"]) {
        assert.notInclude(all, secret, `a log line shows ${secret}`)
      }
      const access = accessLines(logs)
      const paths = access.map((l) => l.annotations["path"])
      assert.include(paths, "/sandbox/discord/api/v10/webhooks/330000000000000001/[redacted]")
      assert.include(paths, "/sandbox/discord/api/v10/webhooks/330000000000000001/[redacted]/messages/@original")
      assert.include(paths, "/api/webhooks/330000000000000001/[redacted]")
      const callback = access.find((l) => l.annotations["path"] === "/auth/idp/callback")
      assert.strictEqual(callback?.annotations["query"], "code=[redacted]&state=[redacted]")
      // The sandbox's own routes at Debug, the gateway's at Info.
      assert.deepStrictEqual([...new Set(access.filter((l) => String(l.annotations["path"]).startsWith("/sandbox/")).map((l) => l.level))], ["DEBUG"])
      assert.strictEqual(callback?.level, "INFO")
    }))
})

describe("redaction", () => {
  it("secret path segments and query values; ids, names and harmless parameters stay", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [`${MODULES}/forms/12?page=2`, `${MODULES}/forms/12?page=2`],
      [`${MODULES}/microblog/getUserId/sandboxbird`, `${MODULES}/microblog/getUserId/sandboxbird`],
      ["/api/webhooks/1/abc?wait=true", "/api/webhooks/1/[redacted]?wait=true"],
      ["/api/v10/interactions/1/tok/callback", "/api/v10/interactions/1/[redacted]/callback"],
      ["/channels/1/webhooks", "/channels/1/webhooks"],
      ["/x/bmg_at_abc", "/x/[redacted]"],
      ["/auth/idp/callback?code=c&state=s&error=access_denied", "/auth/idp/callback?code=[redacted]&state=[redacted]&error=access_denied"],
      ["/x?token=t&key=k&access_token=a&unknown=u", "/x?token=[redacted]&key=[redacted]&access_token=[redacted]&unknown=[redacted]"]
    ]
    for (const [url, expected] of cases) assert.strictEqual(redactUrl(url), expected, url)
    const cause = "RequestError: Transport error (POST https://discord.com/api/webhooks/123/SeCrEt_ToKeN?wait=true) bmg_rt_abcDEF"
    const redacted = redactText(cause)
    assert.notInclude(redacted, "SeCrEt_ToKeN")
    assert.notInclude(redacted, "abcDEF")
    assert.include(redacted, "https://discord.com/api/webhooks/123/[redacted]?wait=true")
  })
})
