/**
 * Key names of durable workflows (effect-asynq/workflow). An execution lives on a control queue
 * `q` and all its state is one hash in that queue's `{q}` cluster slot, beside the queue's tasks:
 * `asynq:{q}:wf:x:<execution id>`. A run of the execution is an ordinary task of the queue.
 */
import { queueKeys } from "./keys.js"

/** The hash of one workflow execution on control queue `queue`. */
export const workflowExecutionKey = (queue: string, executionId: string): string =>
  `${queueKeys(queue).prefix}wf:x:${executionId}`

/** The channel every completed execution is published on (message: `<queue>\n<execution id>`). */
export const workflowDoneChannel = "effect-asynq:wf:done"

/** The channel an interrupt is announced on (message: `<queue>\n<execution id>\n<field>`), so the process running the execution applies it at once. */
export const workflowInterruptChannel = "effect-asynq:wf:interrupt"
