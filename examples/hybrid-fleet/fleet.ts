/**
 * A hybrid fleet's shared settings: long-lived workers (a container, worker.ts) take the steady
 * load; the dispatcher (a Lambda, dispatcher.ts) starts Lambda processors only for the overflow.
 */
import type { SpilloverThreshold } from "../../adapters/aws-lambda/dispatch.js"

export const fleetQueues = ["orders", "email"]

/**
 * Lambda takes over what the workers cannot: the backlog above 200 pending tasks (in
 * tasksPerInvocation-sized invocations), or one invocation as soon as a task has waited 30 s.
 */
export const spilloverAbove: SpilloverThreshold = { backlog: 200, oldestPendingAgeMs: 30_000 }
