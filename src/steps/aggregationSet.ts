import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { deleteAggregationSetScript, readAggregationSetScript } from "../broker/aggregate.js"
import { runScript } from "../broker/script.js"
import { InvalidState } from "../broker/errors.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { type CorruptTask, decodeStored, setAsideCorrupt } from "./corrupt.js"

/** Names one aggregation set: its queue, group and set id. */
export interface AggregationSetId {
  readonly queue: string
  readonly group: string
  readonly setId: string
}

/** An aggregation set's messages (oldest first), its deadline and any members that could not be decoded. */
export interface AggregationSetContent {
  /** The tasks to aggregate, oldest first. */
  readonly msgs: ReadonlyArray<TaskMessage>
  /** Finish (delete the set) before this, or the set goes back into its group. */
  readonly deadlineMs: number
  /** Members whose message was unusable: archived out of the set. */
  readonly corrupt: ReadonlyArray<CorruptTask>
}

/** Reads an aggregation set made by checkGroups. InvalidState when it no longer exists (deleted or reclaimed). */
export const readAggregationSet = Effect.fn("Steps.readAggregationSet")(function* (id: AggregationSetId) {
  const raw = yield* runScript(readAggregationSetScript, id)
  if (raw.deadlineSec === undefined) {
    return yield* Effect.fail(
      new InvalidState({
        message: `aggregation set ${id.setId} of group "${id.group}" in queue "${id.queue}" does not exist (it was deleted, or reclaimed after its deadline)`
      })
    )
  }
  const now = yield* Clock.currentTimeMillis
  const msgs: Array<TaskMessage> = []
  const corrupt: Array<CorruptTask> = []
  for (const { id: taskId, bytes } of raw.tasks) {
    const decoded = decodeStored(id.queue, taskId, bytes)
    if ("msg" in decoded) msgs.push(decoded.msg)
    else {
      const c = yield* setAsideCorrupt(
        id.queue,
        taskId,
        decoded.error,
        { kind: "set", group: id.group, setId: id.setId },
        now
      )
      if (c) corrupt.push(c)
    }
  }
  return { msgs, deadlineMs: raw.deadlineSec * 1000, corrupt } satisfies AggregationSetContent as AggregationSetContent
})

/** Deletes an aggregation set and its member tasks (after their aggregate was enqueued). */
export const deleteAggregationSet = Effect.fn("Steps.deleteAggregationSet")(function* (id: AggregationSetId) {
  return { deleted: yield* runScript(deleteAggregationSetScript, id) }
})
