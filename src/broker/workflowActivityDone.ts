/** Script `workflowActivityDone`: an activity's exit, first write wins (see lua/workflowActivityDone.lua); and the raw reads of an execution. */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { workflowActivityDoneLua } from "../redis/lua.generated.js"
import type { RedisError } from "../redis/errors.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { Broker } from "./Broker.js"
import { unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"

/** An activity exit to record. */
export interface WorkflowActivityDoneInput {
  readonly queue: string
  readonly executionId: string
  /** `a:<name>/<attempt>` */
  readonly field: string
  readonly exit: string
}

/** Script `workflowActivityDone`: the stored exit (the first written), or undefined when the execution does not exist. */
export const workflowActivityDoneScript = defineScript<WorkflowActivityDoneInput, string | undefined>({
  name: "workflowActivityDone",
  source: workflowActivityDoneLua,
  buffers: false,
  keys: (i) => [workflowExecutionKey(i.queue, i.executionId)],
  args: (i) => [i.field, i.exit],
  decode: (reply) =>
    reply === null || reply === undefined
      ? Result.succeed(undefined)
      : typeof reply === "string"
        ? Result.succeed(reply)
        : Result.fail(unexpectedReply("workflowActivityDone", reply, "a string or nil"))
})

/** Reads fields of an execution hash (HMGET): undefined for each one absent. */
export const readExecutionFields = (
  queue: string,
  executionId: string,
  fields: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string | undefined>, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) =>
    redis.use("workflow read", async (c) =>
      (await c.hmget(workflowExecutionKey(queue, executionId), ...fields)).map((v) => v ?? undefined)
    )
  )
