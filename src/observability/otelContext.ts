/**
 * The Promise client's trace headers, from OpenTelemetry JS: when the application has
 * `@opentelemetry/api` installed (it is an optional peer dependency, never a requirement), an
 * enqueue stores what the registered propagator writes for the active context — with the
 * OpenTelemetry SDK's W3C propagator, `traceparent` (and `tracestate`). The API is looked up once,
 * synchronously, when the client is created (`loadOtelApi`: requiring it takes tens of ms, which
 * the first enqueue would otherwise wait for), else on the first enqueue; without it (or with no
 * SDK registered) nothing is added.
 * OpenTelemetry's API keeps its registered SDK on a process-wide global, so this sees the SDK the
 * application set up even when it loaded another copy of the API; when the API cannot be required
 * at all (a bundle that inlined it), the registered SDK is read from that global directly.
 */
import { createRequire } from "node:module"
import { traceparentHeader, tracestateHeader } from "../steps/traceContext.js"

/** The part of `@opentelemetry/api` used here. */
interface OtelApi {
  readonly context: { active(): unknown }
  readonly propagation: { inject(context: unknown, carrier: Record<string, string>): void }
}

let api: OtelApi | null | undefined

/**
 * When the API cannot be required (an application bundle that inlined it): the components the SDK
 * registered, read from the process-wide global where API 1.x keeps them (its registration key,
 * `Symbol.for("opentelemetry.js.api.1")`: the context manager and the propagator).
 */
const fromGlobal = (): OtelApi | null => {
  const g = (globalThis as Record<symbol, unknown>)[Symbol.for("opentelemetry.js.api.1")] as
    | {
        context?: { active?: () => unknown }
        propagation?: { inject?: (c: unknown, carrier: Record<string, string>, setter: unknown) => void }
      }
    | undefined
  const manager = g?.context
  const propagator = g?.propagation
  if (typeof manager?.active !== "function" || typeof propagator?.inject !== "function") return null
  const setter = { set: (carrier: Record<string, string>, key: string, value: string) => void (carrier[key] = value) }
  return {
    context: { active: () => manager.active!() },
    propagation: { inject: (c, carrier) => propagator.inject!(c, carrier, setter) }
  }
}

const loadApi = (): OtelApi | null => {
  if (api !== undefined) return api ?? fromGlobal()
  try {
    const mod = createRequire(import.meta.url)("@opentelemetry/api") as Partial<OtelApi>
    api =
      mod && typeof mod.propagation?.inject === "function" && typeof mod.context?.active === "function"
        ? (mod as OtelApi)
        : null
  } catch {
    api = null
  }
  // Not found: an SDK may still be registered (a bundle with its own copy of the API); read it each time, it may come later.
  return api ?? fromGlobal()
}

/** Looks the API up now (once per process), so that no enqueue waits for it: createClient calls it. */
export const loadOtelApi = (): void => void loadApi()

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
  return typeof tracestate === "string" && tracestate !== ""
    ? { [traceparentHeader]: traceparent, [tracestateHeader]: tracestate }
    : { [traceparentHeader]: traceparent }
}
