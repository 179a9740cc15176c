/**
 * How long an idle fetch loop waits after a fetch that a queue's flow-control limit held back
 * (`DequeueLeaseResult.limited`, lua/includes/flowLimit.lua). A rate-limited queue said exactly
 * when its next task is allowed: the loop looks again then (not sooner, not later: no polling), or
 * earlier when woken as usual. A queue at its concurrency cap frees up when one of its tasks ends:
 * the loop also looks again when one of its own attempts ends (it then most likely has the slot
 * the cap frees); other workers' tasks ending are seen at the next wake or poll.
 */
import type { FlowLimited } from "../steps/dequeueLease.js"

/** The idle wait after a short fetch: until `deadlineMs` (unix ms), and whether an attempt ending here ends it too. */
export interface FlowIdleWait {
  readonly deadlineMs: number
  readonly onSlotFreed: boolean
}

/** The idle wait after a fetch that came back short at `nowMs`: the usual `idleWaitMs`, shortened to a rate limit's next allowance. */
export const flowIdleWait = (limited: FlowLimited | undefined, nowMs: number, idleWaitMs: number): FlowIdleWait => {
  const usual = nowMs + idleWaitMs
  if (limited === undefined) return { deadlineMs: usual, onSlotFreed: false }
  return {
    deadlineMs: limited.untilMs === undefined ? usual : Math.min(usual, Math.max(nowMs, limited.untilMs)),
    onSlotFreed: limited.capped
  }
}

/**
 * How long a time-boxed drain's worker waits after a fetch that took nothing because a queue's
 * flow-control limit held it back: until the rate's next allowance, or one poll interval at a
 * concurrency cap; undefined when no limit held it back (the queues are empty: the worker is done).
 */
export const flowDrainWaitMs = (
  limited: FlowLimited | undefined,
  nowMs: number,
  pollIntervalMs: number
): number | undefined => {
  if (limited === undefined) return undefined
  if (limited.untilMs !== undefined) return Math.max(0, limited.untilMs - nowMs)
  return pollIntervalMs
}
