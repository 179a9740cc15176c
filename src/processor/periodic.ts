/** Runs a background job now and then every `intervalMs`; a failed run is logged and the loop goes on. */
import { Duration, Effect } from "effect"

export const periodic = <E extends { readonly message?: string }, R>(name: string, intervalMs: number, run: Effect.Effect<unknown, E, R>) =>
  run.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`${name} failed`, cause)),
    Effect.andThen(Effect.sleep(Duration.millis(intervalMs))),
    Effect.forever
  )
