/**
 * The gateway's typed client as the panel uses it: a call's failure in words, and a client that is
 * anonymous (sign-in, refresh, sign-out) or acts as the signed-in user.
 */
import { Effect, Result } from "effect"
import { makeClient } from "../http/client.ts"
import type { Client } from "../http/client.ts"
import type { Failure } from "./problems.ts"
import { toFailure } from "./problems.ts"

const USER_AGENT = "bot-module-gateway-panel/1.0"

const baseUrl = () => location.origin

/** Runs a call of the typed client; the failure in words. */
export const run = async <A, E>(effect: Effect.Effect<A, E>): Promise<Result.Result<A, Failure>> => {
  try {
    const result = await Effect.runPromise(Effect.result(effect))
    return Result.isSuccess(result) ? Result.succeed(result.success) : Result.fail(toFailure(result.failure))
  } catch (defect) {
    return Result.fail(toFailure(defect))
  }
}

/** A client without a token. */
export const anonymous = () => Effect.runPromise(makeClient({ baseUrl: baseUrl(), userAgent: USER_AGENT }))

/** A client that sends `access` as its bearer token. */
export const asUser = (access: string): Promise<Client> =>
  Effect.runPromise(makeClient({ baseUrl: baseUrl(), userAgent: USER_AGENT, accessToken: access }))
