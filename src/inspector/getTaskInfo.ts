import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { getTaskInfoScript } from "../broker/getTaskInfo.js"
import { runScript } from "../broker/script.js"
import { requireQueue } from "../broker/queues.js"
import { toTaskInfo } from "./taskRow.js"

/** One task (asynq's GetTaskInfo). QueueNotFound, TaskNotFound, or MessageDecodeError for a corrupt hash. */
export const getTaskInfo = Effect.fn("Inspector.getTaskInfo")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  const now = yield* Clock.currentTimeMillis
  return yield* toTaskInfo(yield* runScript(getTaskInfoScript, { queue, id }), now)
})
