/**
 * Where the sandbox is reached: the configured public base (SandboxMode sets `SandboxConfig.publicOrigin`
 * to PUBLIC_URL; the states read it when they are built) or, for a sandbox served alone (tests), the
 * origin the request came to.
 */
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"

export const sandboxOrigin = (publicOrigin: string | undefined): Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> =>
  publicOrigin !== undefined
    ? Effect.succeed(publicOrigin.replace(/\/+$/, ""))
    : Effect.map(HttpServerRequest.HttpServerRequest, (request) => `http://${request.headers["host"] ?? "127.0.0.1"}`)
