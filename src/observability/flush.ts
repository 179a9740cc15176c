/**
 * Sends buffered spans and metrics now (a function invocation must do that before it returns: the
 * platform may freeze the process right after). A no-op without an OTLP exporter installed;
 * bounded by `timeoutMs` so an unreachable collector cannot hold the invocation.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Flusher } from "effect/observability/OtlpExporter"

/** Sends what the installed OTLP exporters have buffered, waiting at most `timeoutMs`; call it before a function invocation returns. */
export const flushTelemetry = (timeoutMs = 2000): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(Flusher), (flusher) =>
    Option.isNone(flusher)
      ? Effect.void
      : flusher.value.flush.pipe(Effect.timeoutOption(Duration.millis(timeoutMs)), Effect.asVoid)
  )
