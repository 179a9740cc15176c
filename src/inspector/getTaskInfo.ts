import { Clock, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { queueKeys, type TaskState, taskStates } from "../wire/keys.js"
import { TaskNotFound } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import { asArray, bytes, num, text, unexpectedReply } from "./replies.js"
import { toTaskInfo } from "./taskRow.js"

/** One task (asynq's GetTaskInfo). QueueNotFound, TaskNotFound, or MessageDecodeError for a corrupt hash. */
export const getTaskInfo = Effect.fn("Inspector.getTaskInfo")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const raw = yield* redis.scriptBuffer("inspector_getTask", [k.task(id), k.prefix], [id])
  if (raw === null) return yield* new TaskNotFound({ queue, id, message: `task "${id}" not found in queue "${queue}"` })
  const reply = yield* asArray("inspector_getTask", raw)
  const state = text(reply[1]) ?? ""
  if (!(taskStates as ReadonlyArray<string>).includes(state)) return yield* unexpectedReply("inspector_getTask", `a task state (task hash ${k.task(id)} has state "${state}")`)
  return yield* toTaskInfo({ key: k.task(id), msg: bytes(reply[0]), state: state as TaskState, score: num(reply[2]), result: bytes(reply[3]) }, now)
})
