/** Pub/sub notices of durable workflows (no state: the state is in the execution hash; a lost notice only makes a process notice later). */
import * as Effect from "effect/Effect"
import type { RedisError } from "../redis/errors.js"
import { workflowInterruptChannel } from "../wire/workflowKeys.js"
import { Broker } from "./Broker.js"

/** Announces an interrupt (`field`: "interrupt" or "interruptUnsafe") of an execution to the processes that may be running it. */
export const publishWorkflowInterrupt = (
  queue: string,
  executionId: string,
  field: string
): Effect.Effect<number, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) =>
    redis.use("workflow interrupt notice", (c) =>
      c.publish(workflowInterruptChannel, `${queue}\n${executionId}\n${field}`)
    )
  )
