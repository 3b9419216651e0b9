/**
 * The gateway's version, from package.json only: the bundle gets it from scripts/build.mjs (esbuild
 * `define`); run from source (tests, tsx) it is read from package.json once.
 */
import { readFileSync } from "node:fs"

declare const __GATEWAY_VERSION__: string | undefined

export const VERSION: string = typeof __GATEWAY_VERSION__ === "string"
  ? __GATEWAY_VERSION__
  : (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version

/** The product token of the gateway's outbound User-Agent headers. */
export const USER_AGENT_PRODUCT = `bot-module-gateway/${VERSION}`
