/**
 * Export to an OpenTelemetry collector over OTLP/HTTP (JSON), with effect/observability's
 * OtlpTracer and OtlpMetrics and the global `fetch`. Provide the layer to a Server (or give it to
 * `runWorker`'s `otlp` option, the worker command's `--otlp-endpoint`, or a serverless handler's
 * `telemetry`): attempts become spans and the metrics are pushed every `exportIntervalMs`.
 * Without `url`, the standard OpenTelemetry environment variables are read
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_HEADERS`, `OTEL_SERVICE_NAME`, …).
 */
import * as Duration from "effect/Duration"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"

export interface OtlpOptions {
  /** The collector's OTLP/HTTP base URL, e.g. http://localhost:4318 (`/v1/traces` and `/v1/metrics` are appended). Default: the OTEL_EXPORTER_OTLP_* variables; none set: nothing is exported. */
  readonly url?: string | undefined
  /** service.name of the resource (default: OTEL_SERVICE_NAME, else "effect-asynq"). */
  readonly serviceName?: string | undefined
  /** Extra HTTP headers (e.g. an API key). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Export spans (default true). */
  readonly traces?: boolean | undefined
  /** Export metrics (default true). */
  readonly metrics?: boolean | undefined
  /** How often buffered spans and metrics are sent (default 5000 ms for spans, 10000 ms for metrics). */
  readonly exportIntervalMs?: number | undefined
}

const joinUrl = (base: string, path: string) => base.replace(/\/+$/, "") + path

/**
 * A layer that installs the OTLP tracer and metrics exporter (and a `Flusher`: `flushTelemetry`
 * sends what is buffered). Everything buffered is also sent when the layer's scope closes.
 */
export const otlpLayer = (options: OtlpOptions = {}): Layer.Layer<OtlpExporter.Flusher> => {
  // effect's exporters need a service name: without one (and no OTEL_SERVICE_NAME) building them dies.
  const serviceName = options.serviceName ?? (process.env.OTEL_SERVICE_NAME ? undefined : "effect-asynq")
  const resource = serviceName !== undefined ? { serviceName } : undefined
  const interval = options.exportIntervalMs !== undefined ? Duration.millis(options.exportIntervalMs) : undefined
  const headers = options.headers
  const traces = options.traces ?? true
  const metrics = options.metrics ?? true
  const parts: Array<Layer.Layer<OtlpExporter.Flusher, never, any>> = []
  if (options.url !== undefined) {
    if (traces) {
      parts.push(
        OtlpTracer.layer({
          url: joinUrl(options.url, "/v1/traces"),
          resource,
          headers,
          ...(interval ? { exportInterval: interval } : {})
        })
      )
    }
    if (metrics) {
      parts.push(
        OtlpMetrics.layer({
          url: joinUrl(options.url, "/v1/metrics"),
          resource,
          headers,
          ...(interval ? { exportInterval: interval } : {})
        })
      )
    }
  } else {
    if (traces) parts.push(OtlpTracer.layerFromConfig({ resource, headers }))
    if (metrics) parts.push(OtlpMetrics.layerFromConfig({ resource, headers }))
  }
  if (parts.length === 0) return OtlpExporter.layerFlusher
  return Layer.mergeAll(OtlpExporter.layerFlusher, ...parts).pipe(
    Layer.provide(OtlpSerialization.layerJson),
    Layer.provide(FetchHttpClient.layer)
  ) as Layer.Layer<OtlpExporter.Flusher>
}
