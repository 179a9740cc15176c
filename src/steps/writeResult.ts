import { Effect } from "effect"
import { writeTaskResult } from "../broker/writeResult.js"

export interface WriteResultOptions {
  readonly queue: string
  readonly id: string
  readonly result: Uint8Array
}

/** Stores a task's result (hash field `result`, kept with a retained completed task). Returns the byte count. */
export const writeResult = Effect.fn("Steps.writeResult")(function* (options: WriteResultOptions) {
  return yield* writeTaskResult(options.queue, options.id, options.result)
})
