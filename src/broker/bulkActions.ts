/** The inspector's bulk actions: one bounded batch of run all / archive all / delete all per call. */
import * as Result from "effect/Result"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { archiveCutoffSeconds, archiveMaxSize } from "./archive.js"
import { arrayReply } from "./decode.js"
import { numField } from "./fields.js"
import { defineScript } from "./script.js"
import { unixNanosString, unixSeconds } from "./time.js"
import { inspector_archiveAllLua, inspector_deleteAllLua, inspector_runAllLua } from "../redis/lua.generated.js"

/** One batch's reply: tasks done, left in the source, and (archive batches) older archived tasks trimmed. */
export interface BatchCounts {
  readonly done: number
  readonly left: number
  readonly trimmed?: number
}

export interface BulkBatchInput {
  readonly queue: string
  readonly state: TaskState
  /** The group (aggregating only). */
  readonly group: string | undefined
  readonly size: number
  readonly nowMs: number
}

/** Source key, whether it is a list, and the group name ("" unless aggregating). */
const source = ({ queue, state, group }: BulkBatchInput) => {
  const k = queueKeys(queue)
  return state === "aggregating"
    ? { k, key: k.group(group!), list: false, group: group! }
    : {
        k,
        key: k[state as "pending" | "scheduled" | "retry" | "archived" | "completed"],
        list: state === "pending",
        group: ""
      }
}

const counts = (script: "inspector_runAll" | "inspector_archiveAll" | "inspector_deleteAll") => (reply: unknown) =>
  Result.map(arrayReply(script, reply), (a): BatchCounts => {
    const r = { done: numField(a[0]) ?? 0, left: numField(a[1]) ?? 0 }
    return a.length > 2 ? { ...r, trimmed: numField(a[2]) ?? 0 } : r
  })

/** Script `inspector_runAll`: up to `size` tasks of a state (scheduled, retry, archived, a group) -> pending. */
export const runAllBatchScript = defineScript<BulkBatchInput, BatchCounts>({
  name: "inspector_runAll",
  source: inspector_runAllLua,
  buffers: false,
  keys: (i) => {
    const s = source(i)
    return [s.key, s.k.pending, s.k.taskPrefix, s.k.allGroups]
  },
  args: (i) => [i.size, unixNanosString(i.nowMs), source(i).group],
  decode: counts("inspector_runAll")
})

/** Script `inspector_archiveAll`: up to `size` tasks of a state -> archived, trimming the archive. */
export const archiveAllBatchScript = defineScript<BulkBatchInput, BatchCounts>({
  name: "inspector_archiveAll",
  source: inspector_archiveAllLua,
  buffers: false,
  keys: (i) => {
    const s = source(i)
    return [s.key, s.k.archived, s.k.taskPrefix, s.k.allGroups]
  },
  args: (i) => {
    const s = source(i)
    return [
      s.list ? "list" : "zset",
      i.size,
      unixSeconds(i.nowMs),
      archiveCutoffSeconds(i.nowMs),
      archiveMaxSize,
      s.group
    ]
  },
  decode: counts("inspector_archiveAll")
})

/** Script `inspector_deleteAll`: deletes up to `size` tasks of a state. */
export const deleteAllBatchScript = defineScript<BulkBatchInput, BatchCounts>({
  name: "inspector_deleteAll",
  source: inspector_deleteAllLua,
  buffers: false,
  keys: (i) => {
    const s = source(i)
    return [s.key, s.k.taskPrefix, s.k.allGroups, s.k.uniquePrefix]
  },
  args: (i) => {
    const s = source(i)
    return [s.list ? "list" : "zset", i.size, s.group]
  },
  decode: counts("inspector_deleteAll")
})
