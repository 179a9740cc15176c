/**
 * The Promise client's trace headers, from OpenTelemetry JS: when the application has
 * `@opentelemetry/api` installed (it is an optional peer dependency, never a requirement), an
 * enqueue stores what the registered propagator writes for the active context — with the
 * OpenTelemetry SDK's W3C propagator, `traceparent` (and `tracestate`). The API is looked up once,
 * synchronously, on the first enqueue; without it (or with no SDK registered) nothing is added.
 * OpenTelemetry's API keeps its registered SDK on a process-wide global, so this sees the SDK the
 * application set up even when it loaded another copy of the API.
 */
import { createRequire } from "node:module"
import { traceparentHeader, tracestateHeader } from "./traceContext.js"

/** The part of `@opentelemetry/api` used here. */
interface OtelApi {
  readonly context: { active(): unknown }
  readonly propagation: { inject(context: unknown, carrier: Record<string, string>): void }
}

let api: OtelApi | null | undefined

const loadApi = (): OtelApi | null => {
  if (api !== undefined) return api
  try {
    const mod = createRequire(import.meta.url)("@opentelemetry/api") as Partial<OtelApi>
    api = mod && typeof mod.propagation?.inject === "function" && typeof mod.context?.active === "function" ? (mod as OtelApi) : null
  } catch {
    api = null
  }
  return api
}

/** `traceparent`/`tracestate` of OpenTelemetry's active context, or undefined (no API, no SDK or no active span). */
export const otelTraceHeaders = (): Readonly<Record<string, string>> | undefined => {
  const otel = loadApi()
  if (otel === null) return undefined
  const carrier: Record<string, string> = {}
  try {
    otel.propagation.inject(otel.context.active(), carrier)
  } catch {
    return undefined
  }
  const traceparent = carrier[traceparentHeader]
  if (typeof traceparent !== "string") return undefined
  const tracestate = carrier[tracestateHeader]
  return typeof tracestate === "string" && tracestate !== "" ? { [traceparentHeader]: traceparent, [tracestateHeader]: tracestate } : { [traceparentHeader]: traceparent }
}
