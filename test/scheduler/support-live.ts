/** Waiting on real time inside a TestClock test (for background fibers doing Redis I/O). */
import { Effect } from "effect"
import { TestClock } from "effect/testing"

/** Re-checks `check` every 10 ms of real time until it holds (fails after `timeoutMs`). */
export const eventually = <A>(check: Effect.Effect<A, unknown>, ok: (a: A) => boolean, timeoutMs = 5000): Effect.Effect<A> =>
  Effect.gen(function* () {
    const start = Date.now()
    while (true) {
      const a = yield* Effect.orDie(check)
      if (ok(a)) return a
      if (Date.now() - start > timeoutMs) return yield* Effect.die(new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(a)}`))
      yield* TestClock.withLive(Effect.sleep(10))
    }
  })

/** Lets background fibers run for `ms` of real time (to show that nothing more happens). */
export const realPause = (ms: number) => TestClock.withLive(Effect.sleep(ms))
