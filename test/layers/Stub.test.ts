/** The stub helper: listed members work; any other dies naming itself, as a method or as a value. */
import { assert, it } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted } from "effect"
import { Bots } from "../../src/services/platform/Bots.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { stub, stubService } from "./Stub.ts"

const defectMessage = <A, E>(exit: Exit.Exit<A, E>) => {
  assert.isTrue(Exit.isFailure(exit))
  if (Exit.isSuccess(exit)) return ""
  const defect = Cause.squash(exit.cause)
  return defect instanceof Error ? defect.message : String(defect)
}

it.effect("a listed member answers; an unlisted method dies with 'not stubbed: Tag.method'", () =>
  Effect.gen(function*() {
    const platform = yield* ChatPlatform
    assert.strictEqual(platform.authorizeUrl({ state: "s", codeChallenge: "c", redirectUri: "r" }), "https://stub/")
    const exit = yield* Effect.exit(platform.getGuild(Redacted.make("t"), "1"))
    assert.strictEqual(defectMessage(exit), "not stubbed: ChatPlatform.getGuild")
  }).pipe(Effect.provide(stub(ChatPlatform, { authorizeUrl: () => "https://stub/" }))))

it.effect("an unlisted Effect-valued member dies when run", () =>
  Effect.gen(function*() {
    const bots = stubService(Bots, { get: () => Effect.succeed(undefined) })
    assert.isUndefined(yield* bots.get("1"))
    assert.strictEqual(defectMessage(yield* Effect.exit(bots.list)), "not stubbed: Bots.list")
  }))
