/**
 * For the fast path that runs an effect's first try bare and builds its retry machinery only after
 * a failure: the effect as a retry loop must see it, failing with that first failure on its first
 * run (no second send) and running the effect itself from then on. So the retry's schedule, logs
 * and checks go exactly as if it had wrapped the first try.
 */
import * as Effect from "effect/Effect"

export const replayFirst = <A, E, R>(first: E, eff: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let replay = true
  return Effect.suspend(() => {
    if (!replay) return eff
    replay = false
    return Effect.fail(first)
  })
}
