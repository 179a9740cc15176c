import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"

/** `value` when it is a whole number >= `min`, else InvalidArgument naming the option. */
export const wholeAtLeast = (field: string, value: number, min: number): Effect.Effect<number, InvalidArgument> =>
  Number.isInteger(value) && value >= min
    ? Effect.succeed(value)
    : Effect.fail(new InvalidArgument({ field, message: `${field} must be a whole number >= ${min}, got ${value}` }))

/** `value` when it is a finite number >= `min` (milliseconds), else InvalidArgument naming the option. */
export const durationAtLeast = (field: string, value: number, min: number): Effect.Effect<number, InvalidArgument> =>
  Number.isFinite(value) && value >= min
    ? Effect.succeed(value)
    : Effect.fail(
        new InvalidArgument({ field, message: `${field} must be a number of milliseconds >= ${min}, got ${value}` })
      )
