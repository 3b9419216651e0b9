/** The reason a failed platform call leaves on a submission's effect (services/submissions/FailureText.ts). */
import { describe, expect, it } from "@effect/vitest"
import { RequestTimeout, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { failureText } from "../../src/services/submissions/FailureText.ts"

describe("failureText", () => {
  it("an outage or a time-out: its own words (their message is empty)", () => {
    const down = ServiceUnavailable.of("The chat platform is unavailable (HTTP 503); try again shortly.", 5)
    expect(down.message).toBe("")
    expect(failureText(down)).toBe("The chat platform is unavailable (HTTP 503); try again shortly.")
    expect(failureText(RequestTimeout.of("The chat platform did not answer within 10 s."))).toBe("The chat platform did not answer within 10 s.")
  })

  it("a refusal: status, code and message; anything else: its message, or itself", () => {
    expect(failureText(new PlatformRejected({ status: 403, code: 50001, message: "Missing Access" }))).toBe("403 50001: Missing Access")
    expect(failureText(new PlatformRejected({ status: 400, message: "Bad" }))).toBe("400: Bad")
    expect(failureText(new Error("socket hang up"))).toBe("socket hang up")
    expect(failureText("odd")).toBe("odd")
  })
})
