/**
 * The lines a start logs to say where to go next: the mode, then (for a process serving the API)
 * the docs, the control panel and, in the sandbox, the browser sign-in that ends on a page showing
 * the temporary token to exchange.
 */
import type { AppConfigShape } from "./AppConfig.ts"

type StartupConfig = Pick<AppConfigShape, "sandbox" | "role" | "publicUrl" | "allowedRedirectUris">

export const startupLines = (config: StartupConfig): ReadonlyArray<string> => {
  const url = config.publicUrl
  const mode = config.sandbox
    ? `sandbox mode: the chat platform, sources and task board are served at ${url}/sandbox`
    : "platform mode: talking to the configured chat platform"
  if (config.role === "worker") return [mode, "ROLE=worker: job workers; serving /healthz and /readyz only"]
  const callback = `${url}/sandbox/callback`
  return [
    mode,
    `ROLE=${config.role}: public URL ${url}; interactive docs at ${url}/docs; control panel at ${url}/app`,
    ...(config.sandbox && config.allowedRedirectUris.includes(callback)
      ? [`sign in from a browser: ${url}/auth/idp/login?redirect_uri=${callback}`]
      : [])
  ]
}
