/**
 * W3C Trace Context over asynq's task headers: the `traceparent` header an enqueue stores when a
 * span is active, and the parent an attempt's span continues from it. asynq (Go) carries the
 * headers unchanged, so an asynq middleware with OpenTelemetry's propagator continues the same
 * trace (README: Observability).
 *
 * Only effect's own modules are used here (no tracer is loaded): the checks read what the fiber
 * already holds, so an enqueue with no tracer installed pays one property read.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Tracer from "effect/Tracer"

/** The header names (W3C Trace Context, lower case as OpenTelemetry's propagator writes them). */
export const traceparentHeader = "traceparent"
/** The W3C trace-context header carrying vendor state, stored in the task's headers next to `traceparent`. */
export const tracestateHeader = "tracestate"

const hex32 = /^[0-9a-f]{32}$/
const hex16 = /^[0-9a-f]{16}$/
const zeros32 = "0".repeat(32)
const zeros16 = "0".repeat(16)

/** `00-<trace id>-<span id>-<flags>` for a span, or undefined when its ids are not W3C ids. */
export const formatTraceparent = (span: {
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
}): string | undefined => {
  const traceId = span.traceId.toLowerCase()
  const spanId = span.spanId.toLowerCase()
  if (!hex32.test(traceId) || !hex16.test(spanId) || traceId === zeros32 || spanId === zeros16) return undefined
  return `00-${traceId}-${spanId}-${span.sampled ? "01" : "00"}`
}

/**
 * The span a `traceparent` header names (an external span: the producer's), or undefined when the
 * value is not a valid W3C traceparent (version 00, or a later version read as 00 allows).
 */
export const parseTraceparent = (value: string | undefined): Tracer.ExternalSpan | undefined => {
  if (value === undefined) return undefined
  const parts = value.trim().toLowerCase().split("-")
  if (parts.length < 4) return undefined
  const [version, traceId, spanId, flags] = parts as [string, string, string, string]
  if (!/^[0-9a-f]{2}$/.test(version) || version === "ff" || (version === "00" && parts.length !== 4)) return undefined
  if (!hex32.test(traceId) || !hex16.test(spanId) || !/^[0-9a-f]{2}$/.test(flags)) return undefined
  if (traceId === zeros32 || spanId === zeros16) return undefined
  return Tracer.externalSpan({ traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 })
}

/** Whether spans made in this fiber go to an installed tracer (not effect's built-in one), and tracing is on. */
export const tracerInstalled = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.cache.tracer !== undefined && fiber.cache.tracerEnabled

/** The nearest external span (a parent taken from an incoming request) up the chain, if any. */
const nearestExternal = (span: Tracer.AnySpan | undefined): Tracer.ExternalSpan | undefined => {
  for (let s = span, depth = 0; s !== undefined && depth < 64; depth++) {
    if (s._tag === "ExternalSpan") return s
    s = s.parent._tag === "Some" ? s.parent.value : undefined
  }
  return undefined
}

/**
 * The trace headers an enqueue in this fiber stores: `traceparent` of the current span when a
 * tracer is installed; with no tracer, that of the nearest external span (a trace handed in from
 * outside goes on through the queue); nothing when there is no span to continue.
 */
export const traceHeadersOf = (fiber: Fiber.Fiber<unknown, unknown>): Readonly<Record<string, string>> | undefined => {
  const span = fiber.cache.span
  if (span === undefined || !fiber.cache.tracerEnabled) return undefined
  const from = fiber.cache.tracer !== undefined ? span : nearestExternal(span)
  if (from === undefined) return undefined
  const traceparent = formatTraceparent(from)
  return traceparent === undefined ? undefined : { [traceparentHeader]: traceparent }
}

/** `traceHeadersOf` the current fiber. */
export const currentTraceHeaders: Effect.Effect<Readonly<Record<string, string>> | undefined> =
  Effect.withFiberSucceed(traceHeadersOf)
