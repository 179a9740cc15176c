/**
 * One timer for the time limits of all running attempts (instead of a sleeping fiber per task), and
 * for the fetch loop's poll interval while it waits idle: a fiber that sleeps on Effect's Clock (TestClock in tests) until the earliest deadline, fires every
 * deadline that has passed, and sleeps again. Adding a deadline later than the earliest one (the
 * usual case: each new attempt's limit is now + its timeout) costs a Set insert and no wake-up.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { makeSignal } from "./Signal.js"

export interface Deadlines {
  /** Calls `fire` once at `atMs` (a time on Effect's Clock) unless the returned function is called first. */
  readonly add: (atMs: number, fire: () => void) => () => void
}

interface Entry {
  readonly atMs: number
  readonly fire: () => void
}

/** Starts the deadline fiber in the current scope (it stops when the scope closes). */
export const makeDeadlines: Effect.Effect<Deadlines, never, Scope.Scope> = Effect.gen(function* () {
  const entries = new Set<Entry>()
  const wake = makeSignal()
  /** The deadline the fiber sleeps until (Infinity: none). */
  let nextAtMs = Infinity
  const loop = Effect.gen(function* () {
    for (;;) {
      wake.clear()
      const now = yield* Clock.currentTimeMillis
      nextAtMs = Infinity
      for (const e of entries) {
        if (e.atMs <= now) {
          entries.delete(e)
          e.fire()
        } else if (e.atMs < nextAtMs) nextAtMs = e.atMs
      }
      yield* nextAtMs === Infinity ? wake.wait() : wake.wait(nextAtMs - now)
    }
  })
  yield* Effect.forkScoped(loop, { startImmediately: true })
  return {
    add: (atMs, fire) => {
      const e: Entry = { atMs, fire }
      entries.add(e)
      if (atMs < nextAtMs) {
        nextAtMs = atMs
        wake.raise()
      }
      return () => void entries.delete(e)
    }
  }
})
