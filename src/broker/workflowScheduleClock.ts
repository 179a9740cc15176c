/** Script `workflowScheduleClock`: a durable clock as a scheduled task, once per clock name (see lua/workflowScheduleClock.lua). */
import * as Result from "effect/Result"
import { workflowScheduleClockLua } from "../redis/lua.generated.js"
import type { ScriptArg } from "../redis/Redis.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixMsString } from "./time.js"

/** A clock to schedule. */
export interface WorkflowScheduleClockInput {
  readonly queue: string
  readonly executionId: string
  /** `d:DurableClock/<name>` */
  readonly deferredField: string
  readonly taskId: string
  readonly taskMessage: ScriptArg
  readonly wakeUpMs: number
}

/** Script `workflowScheduleClock`: true when scheduled now, false when it was already (or has fired). */
export const workflowScheduleClockScript = defineScript<WorkflowScheduleClockInput, boolean>({
  name: "workflowScheduleClock",
  source: workflowScheduleClockLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.queue)
    return [workflowExecutionKey(i.queue, i.executionId), k.taskPrefix, k.scheduled]
  },
  args: (i) => [i.deferredField, i.taskId, i.taskMessage, unixMsString(i.wakeUpMs), i.queue],
  decode: (reply) =>
    Result.flatMap(integerReply("workflowScheduleClock", reply), (n) =>
      n === 1
        ? Result.succeed(true)
        : n === 0
          ? Result.succeed(false)
          : Result.fail(unexpectedReply("workflowScheduleClock", n, "0 or 1"))
    )
})
