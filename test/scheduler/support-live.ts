/** Real time inside a TestClock test, for the checks that something does NOT happen. */
import { Effect } from "effect"
import { TestClock } from "effect/testing"

/**
 * Lets background fibers run for `ms` of real time while the TestClock stands still, to show that
 * nothing more happens (no duplicate, no stray enqueue). There is no condition to wait on for an
 * absence; this is the only real pause the scheduler tests take, and it is short.
 */
export const realPause = (ms: number) => TestClock.withLive(Effect.sleep(ms))
