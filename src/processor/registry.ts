/** The tasks this server is running right now: what the heartbeat extends, cancel finds, shutdown stops and asynq:workers lists. */
import type { TaskMessage } from "../wire/TaskMessage.js"

/**
 * Why the processor stopped a running handler: canceled (`asynq:cancel`), its lease was lost, the
 * server shuts down, or a time-boxed drain reached its hard stop ("function-deadline").
 */
export type StopReason = "canceled" | "lease-lost" | "shutdown" | "function-deadline"

export interface ActiveTask {
  readonly msg: TaskMessage
  readonly startedAtMs: number
  readonly deadlineMs: number
  /** When our lease runs out unless extended (updated by the heartbeat). */
  leaseExpiresAtMs: number
  /**
   * When set, writing the outcome is given up at this time even if the lease still holds (a drain
   * must return before its invocation ends; the lease then lets `recover` take the task back).
   */
  settleByMs: number | undefined
  /**
   * When set (by a drain, before the attempt starts), the task is not run: it is given back to the
   * retry set, due at this time, without counting as a failure (a task the drain cannot finish).
   */
  skipUntilMs: number | undefined
  /** Why the task was stopped (set once, by `Registry.stop`). */
  stopReason: StopReason | undefined
  /**
   * What ended the attempt's handler early, written by the attempt once its handler is done
   * (undefined: the handler finished by itself, or never ran). A stop that came after the
   * handler had finished sets `stopReason` but not this.
   */
  stoppedBy: StopReason | "timeout" | undefined
  /** Set by the running task: stops its handler (called once, by `Registry.stop`). */
  onStop: ((reason: StopReason) => void) | undefined
  /**
   * Set by the intake on a Redis Cluster (writesAside.ts): called once, when writing the task's outcome first
   * fails (the task then gives its slot back while the write is tried again: see writesAside.ts and intake/slots.ts).
   */
  onWriteFailed: (() => void) | undefined
}

export interface Registry {
  /** Every attempt running here (each until its outcome is written): what the slot count is made of. */
  readonly tasks: ReadonlySet<ActiveTask>
  /**
   * Registers an attempt. An attempt of the same task (queue and id) still registered is stale: the
   * task was leased again, so its lease is gone; that attempt is stopped ("lease-lost").
   */
  readonly add: (t: ActiveTask) => void
  readonly remove: (t: ActiveTask) => void
  /**
   * Stops the running attempt of task `id` (of `queue` when given: ids are unique per queue only;
   * asynq's cancel names just the id, and stops it in every queue). False when none was stopped.
   */
  readonly stop: (id: string, reason: StopReason, queue?: string) => boolean
  /** Stops this attempt (no-op when it is already stopping). */
  readonly stopTask: (t: ActiveTask, reason: StopReason) => boolean
  readonly stopAll: (reason: StopReason) => number
  /** The current attempt of each task, grouped by queue (what the heartbeat extends). */
  readonly byQueue: () => Map<string, Array<ActiveTask>>
}

export const makeRegistry = (): Registry => {
  const tasks = new Set<ActiveTask>()
  /** The current attempt of each task: by queue, then id (no key strings built per task). */
  const current = new Map<string, Map<string, ActiveTask>>()
  const stopTask = (t: ActiveTask, reason: StopReason) => {
    if (t.stopReason !== undefined) return false
    t.stopReason = reason
    t.onStop?.(reason)
    return true
  }
  return {
    tasks,
    add: (t) => {
      let ofQueue = current.get(t.msg.queue)
      if (ofQueue === undefined) current.set(t.msg.queue, (ofQueue = new Map()))
      const stale = ofQueue.get(t.msg.id)
      ofQueue.set(t.msg.id, t)
      tasks.add(t)
      if (stale !== undefined && stale !== t) stopTask(stale, "lease-lost")
    },
    remove: (t) => {
      tasks.delete(t)
      const ofQueue = current.get(t.msg.queue)
      if (ofQueue !== undefined && ofQueue.get(t.msg.id) === t) ofQueue.delete(t.msg.id)
    },
    stop: (id, reason, queue) => {
      let stopped = false
      for (const [q, ofQueue] of current) {
        if (queue !== undefined && q !== queue) continue
        const t = ofQueue.get(id)
        if (t !== undefined && stopTask(t, reason)) stopped = true
      }
      return stopped
    },
    stopTask,
    stopAll: (reason) => {
      let n = 0
      for (const t of [...tasks]) if (stopTask(t, reason)) n++
      return n
    },
    byQueue: () => {
      const m = new Map<string, Array<ActiveTask>>()
      for (const [q, ofQueue] of current) if (ofQueue.size > 0) m.set(q, [...ofQueue.values()])
      return m
    }
  }
}
