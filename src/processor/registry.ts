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
   * Set by the fetch loop on a Redis Cluster: called once, when writing the task's outcome first
   * fails (the task then gives its slot back while the write is tried again: see fetcher.ts).
   */
  onWriteFailed: (() => void) | undefined
}

export interface Registry {
  readonly tasks: Map<string, ActiveTask>
  readonly add: (t: ActiveTask) => void
  readonly remove: (id: string) => void
  /** Stops a running task (no-op when it is not running or already stopping). */
  readonly stop: (id: string, reason: StopReason) => boolean
  readonly stopAll: (reason: StopReason) => number
  /** Running tasks grouped by queue. */
  readonly byQueue: () => Map<string, Array<ActiveTask>>
}

export const makeRegistry = (): Registry => {
  const tasks = new Map<string, ActiveTask>()
  const stop = (id: string, reason: StopReason) => {
    const t = tasks.get(id)
    if (!t || t.stopReason !== undefined) return false
    t.stopReason = reason
    t.onStop?.(reason)
    return true
  }
  return {
    tasks,
    add: (t) => void tasks.set(t.msg.id, t),
    remove: (id) => void tasks.delete(id),
    stop,
    stopAll: (reason) => {
      let n = 0
      for (const id of [...tasks.keys()]) if (stop(id, reason)) n++
      return n
    },
    byQueue: () => {
      const m = new Map<string, Array<ActiveTask>>()
      for (const t of tasks.values()) {
        const list = m.get(t.msg.queue)
        if (list) list.push(t)
        else m.set(t.msg.queue, [t])
      }
      return m
    }
  }
}
