/**
 * Traces over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT (`<endpoint>/v1/traces`, the
 * OpenTelemetry convention) when it is set; nothing otherwise (App.ts keeps tracing disabled then).
 */
import { Layer, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { readFileSync } from "node:fs"

// The version lives in package.json only: the bundle gets it from scripts/build.mjs (esbuild `define`).
declare const __GATEWAY_VERSION__: string | undefined
export const SERVICE_VERSION: string = typeof __GATEWAY_VERSION__ === "string"
  ? __GATEWAY_VERSION__
  : (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version

export const Tracing = (endpoint: string | undefined, serviceName = "bot-module-gateway") =>
  endpoint === undefined
    ? Layer.succeed(References.TracerEnabled, false)
    : OtlpTracer.layer({
      url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
      resource: { serviceName, serviceVersion: SERVICE_VERSION },
      exportInterval: "1 second"
    }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
