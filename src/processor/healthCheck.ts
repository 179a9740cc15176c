/** Health check (asynq's, every 15 s): PING Redis and report the result (undefined when it answered) to the user's callback. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ping } from "../broker/ping.js"
import { periodic } from "./periodic.js"

export const healthCheckOnce = Effect.fn("Processor.healthCheckOnce")(function* (callback: (error: unknown) => void) {
  const r = yield* Effect.result(ping())
  const error = r._tag === "Success" ? undefined : r.failure
  yield* Effect.try({ try: () => callback(error), catch: (e) => e }).pipe(
    Effect.catch((e) => Effect.logWarning(`healthCheck callback threw: ${String(e)}`))
  )
})

export const healthCheckLoop = (callback: (error: unknown) => void, intervalMs: number) =>
  Effect.sleep(Duration.millis(intervalMs)).pipe(
    Effect.andThen(periodic("health check", intervalMs, healthCheckOnce(callback)))
  )
