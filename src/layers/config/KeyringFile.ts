/**
 * The keyring of the secrets at rest: TOKEN_ENCRYPTION_KEY (AppConfig), else the sandbox key kept
 * in DATA_DIR. The gateway (main.ts) generates that key once when it is missing; the CLI (cli.ts)
 * needs it to exist already (it must open what the gateway sealed).
 */
import { Data, Effect } from "effect"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { generateKey, parseKeyring } from "../../services/infra/Cipher.ts"
import type { Keyring } from "../../services/infra/Cipher.ts"
import type { AppConfigShape } from "./AppConfig.ts"

/** No keyring to use: its one line says why. */
export class KeyringUnavailable extends Data.TaggedError("KeyringUnavailable")<{ readonly message: string }> {}

export const keyringOf = (
  config: Pick<AppConfigShape, "keyring" | "dataDir">,
  options: { readonly generate: boolean }
): Effect.Effect<Keyring, KeyringUnavailable> =>
  config.keyring !== undefined ? Effect.succeed(config.keyring) : Effect.gen(function*() {
    const file = join(config.dataDir, "token-encryption.key")
    if (!existsSync(file)) {
      if (!options.generate) {
        return yield* new KeyringUnavailable({
          message: `TOKEN_ENCRYPTION_KEY is not set and ${config.dataDir} has no sandbox key yet (start the gateway once, or set TOKEN_ENCRYPTION_KEY)`
        })
      }
      mkdirSync(config.dataDir, { recursive: true })
      writeFileSync(file, `k1:${generateKey()}\n`, { mode: 0o600 })
      yield* Effect.logWarning(`no TOKEN_ENCRYPTION_KEY: generated a sandbox key in ${file}; set TOKEN_ENCRYPTION_KEY outside the sandbox`)
    }
    return options.generate
      ? parseKeyring(readFileSync(file, "utf8").trim())
      : yield* Effect.try({
        try: () => parseKeyring(readFileSync(file, "utf8").trim()),
        catch: (e) => new KeyringUnavailable({ message: e instanceof Error ? e.message : String(e) })
      })
  })
