/**
 * A function invocation sends its buffered spans and metrics before it returns (the platform may
 * freeze the process right after). The flush is loaded only by handlers given telemetry.
 */
import * as Effect from "effect/Effect"

export const withTelemetryFlush = <A, E, R>(
  enabled: boolean,
  program: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  enabled
    ? program.pipe(
        Effect.ensuring(
          Effect.promise(() => import("../../src/observability/flush.js")).pipe(
            Effect.flatMap(({ flushTelemetry }) => flushTelemetry())
          )
        )
      )
    : program
