import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { TaskNotFound } from "./errors.js"
import { asInteger } from "./replies.js"

/** Script `writeResult`: stores result bytes in the task hash; TaskNotFound when the task does not exist. */
export const writeTaskResult = Effect.fn("Broker.writeResult")(function* (queue: string, id: string, result: Uint8Array) {
  const { redis } = yield* Broker
  const n = yield* asInteger("writeResult", yield* redis.script("writeResult", [queueKeys(queue).task(id)], [bytesArg(result)]))
  if (n < 0) return yield* Effect.fail(new TaskNotFound({ queue, id, message: `cannot write the result of task ${id}: no such task in queue "${queue}"` }))
  return n
})
