/** Turning one task's stored fields into a TaskInfo. */
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import { type TaskInfo, taskInfoFromMessage } from "../steps/taskInfo.js"
import type { TaskState } from "../wire/keys.js"
import { decodeTaskMessage, MessageDecodeError } from "../wire/TaskMessage.js"

export interface StoredTask {
  readonly key: string
  readonly msg: Uint8Array | undefined
  readonly state: TaskState
  readonly result: Uint8Array | undefined
  /** The state-specific score: process-at (scheduled/retry), lease expiry (active), unix s. */
  readonly score: number | undefined
}

/** The TaskInfo of a stored task; fails with MessageDecodeError when `msg` is missing or corrupt. */
export const toTaskInfo = (t: StoredTask, nowMs: number): Effect.Effect<TaskInfo, MessageDecodeError> =>
  Effect.gen(function* () {
    if (t.msg === undefined)
      return yield* new MessageDecodeError({ message: `task hash ${t.key} has no msg field`, key: t.key })
    const bytes = t.msg
    const msg = yield* Effect.try({
      try: () => decodeTaskMessage(bytes, t.key),
      catch: (e) => (e instanceof MessageDecodeError ? e : new MessageDecodeError({ message: String(e), key: t.key }))
    })
    let nextProcessAt: Date | undefined
    if (t.state === "pending") nextProcessAt = new Date(nowMs)
    else if ((t.state === "scheduled" || t.state === "retry") && t.score !== undefined)
      nextProcessAt = new Date(t.score * 1000)
    // An active task is orphaned when its lease ran out (or it has none): no worker extends it.
    const isOrphaned = t.state === "active" && (t.score === undefined || t.score * 1000 <= nowMs)
    return taskInfoFromMessage(msg, t.state, { nextProcessAt, isOrphaned, result: t.result })
  })

/** Same, but a corrupt task is left out (listings skip bad data, like asynq). */
export const toTaskInfoOption = (t: StoredTask, nowMs: number): Effect.Effect<Option.Option<TaskInfo>> =>
  toTaskInfo(t, nowMs).pipe(Effect.option)
