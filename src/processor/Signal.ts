/**
 * A level-triggered wake-up flag for one waiting fiber: `raise` sets it (from any callback),
 * `wait` returns at once when it is set (clearing it), else when it is raised or after a timeout.
 * Raising many times before a wait counts once, so bursts of signals cost nothing.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

export interface Signal {
  readonly raise: () => void
  /** Forget signals raised so far (call before looking for work, so later ones are kept). */
  readonly clear: () => void
  /** Wait until raised (or `timeoutMs` passes, when given); true when raised. */
  readonly wait: (timeoutMs?: number) => Effect.Effect<boolean>
}

export const makeSignal = (): Signal => {
  let raised = false
  let waiter: Deferred.Deferred<void> | undefined
  return {
    raise: () => {
      raised = true
      if (waiter) Deferred.doneUnsafe(waiter, Effect.void)
    },
    clear: () => {
      raised = false
    },
    wait: (timeoutMs) =>
      Effect.suspend(() => {
        if (raised) {
          raised = false
          return Effect.succeed(true)
        }
        const d = Deferred.makeUnsafe<void>()
        waiter = d
        const awaited = Deferred.await(d).pipe(Effect.as(true))
        const bounded =
          timeoutMs === undefined
            ? awaited
            : awaited.pipe(
                Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.succeed(false) })
              )
        return bounded.pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (waiter === d) waiter = undefined
              raised = false
            })
          )
        )
      })
  }
}
