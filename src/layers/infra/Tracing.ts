/**
 * Traces over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT (`<endpoint>/v1/traces`, the
 * OpenTelemetry convention) when it is set; nothing otherwise (App.ts keeps tracing disabled then).
 */
import { Layer, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

import { VERSION } from "../../domain/infra/Version.ts"

export const SERVICE_VERSION: string = VERSION

export const Tracing = (endpoint: string | undefined, serviceName = "bot-module-gateway") =>
  endpoint === undefined
    ? Layer.succeed(References.TracerEnabled, false)
    : OtlpTracer.layer({
      url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
      resource: { serviceName, serviceVersion: SERVICE_VERSION },
      exportInterval: "1 second"
    }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
