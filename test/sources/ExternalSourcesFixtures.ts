/**
 * What the ExternalSources*.test.ts files share: the live ExternalSources clients pointed at the
 * sandbox twins over real HTTP, a client built from changed options, and a failure's first message.
 */
import { Effect, Layer } from "effect"
import type { ExternalSourcesOptions } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { ExternalSourcesHttp } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"
import { SandboxServer, SandboxUrl } from "./SandboxServerFixtures.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"

export const TIMEOUT = "1 second"

/** Runs `f` with a client built from the sandbox options, changed by `change`. */
export const withSources = <A, E, R>(
  change: (o: ExternalSourcesOptions, url: string) => ExternalSourcesOptions,
  f: (s: ExternalSources["Service"]) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const url = yield* SandboxUrl
    const options = change(SandboxMode.sourcesOptions(url, TIMEOUT), url)
    return yield* ExternalSources.use(f).pipe(Effect.provide(ExternalSourcesHttp.layer(options)))
  })

export const Env = Layer.unwrap(Effect.gen(function*() {
  const url = yield* SandboxUrl
  return ExternalSourcesHttp.layer(SandboxMode.sourcesOptions(url, TIMEOUT))
})).pipe(
  Layer.provideMerge(SandboxServer),
  // The outages and refusals these tests provoke are logged as warnings: kept, not printed.
  Layer.provideMerge(CapturedLogs.layer)
)

export const message = (e: { readonly problems: ReadonlyArray<{ readonly message: string }> }) => e.problems[0]?.message ?? ""
