import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

/**
 * asynq's DefaultRetryDelayFunc, in ms: n^4 + 15 + rand[0,30)·(n + 1) seconds, where n is the
 * number of times the task was retried before this failure. Randomness from Effect's Random.
 */
export const defaultRetryDelayMs = (retried: number): Effect.Effect<number> =>
  Effect.map(Random.nextIntBetween(0, 30, { halfOpen: true }), (r) => (retried ** 4 + 15 + r * (retried + 1)) * 1000)
