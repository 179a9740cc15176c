/**
 * `effect-asynq/observability`: worker metrics, attempt spans and trace propagation.
 *
 * - Metrics: `Server.start(handlers, { metrics: { port: 9464 } })` (or `runWorker`, or
 *   `effect-asynq worker --metrics-port 9464`) records the worker metrics below and serves
 *   Prometheus text at `/metrics`; `metricsText()` renders them, `serveMetrics()` serves them anywhere.
 * - Traces: with a tracer installed (`otlpLayer({ url })`), every attempt is a span continuing the
 *   trace of the enqueue that made the task (its W3C `traceparent` header).
 * - Functions: `flushTelemetry()` sends what is buffered before an invocation returns (the Lambda
 *   and Cloud Functions drain handlers do it when given `telemetry`).
 */
export { otlpLayer, type OtlpOptions } from "./otlp.js"
export { flushTelemetry } from "./flush.js"
export { metricsText, type MetricsEndpoint, type MetricsEndpointOptions, serveMetrics } from "./metricsEndpoint.js"
export { prometheusContentType, queueMetricsText, renderQueueMetrics } from "./queueMetrics.js"
export {
  attemptDurationSeconds,
  attemptsTotal,
  fetchBatchSize,
  leaseExtensionsTotal,
  leasesLostTotal,
  tasksInFlight,
  workerMetricNames
} from "./workerMetrics.js"
export {
  currentTraceHeaders,
  formatTraceparent,
  parseTraceparent,
  traceparentHeader,
  tracestateHeader
} from "../steps/traceContext.js"
export { otelTraceHeaders } from "./otelContext.js"
export type { MetricsOptions } from "./metricsEndpoint.js"
