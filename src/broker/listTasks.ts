/** The inspector's task listings: one page of a state's tasks with their stored fields. */
import * as Result from "effect/Result"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { arrayReply } from "./decode.js"
import { bytesField, numField, textField } from "./fields.js"
import { defineScript } from "./script.js"
import { inspector_listListLua, inspector_listZsetLua } from "../redis/lua.generated.js"

/** One task as stored: its hash key, message bytes, result, and its score in the state's zset (or lease). */
export interface StoredRow {
  readonly key: string
  readonly msg: Uint8Array | undefined
  readonly result: Uint8Array | undefined
  readonly score: number | undefined
}

export interface PageInput {
  readonly queue: string
  readonly state: TaskState
  /** The group (aggregating only). */
  readonly group?: string | undefined
  /** First and last index of the page (0-based, inclusive). */
  readonly start: number
  readonly stop: number
}

/** Script `inspector_listList`: a page of the pending or active list, oldest first (LPUSH puts the newest at the head). */
export const listListScript = defineScript<PageInput, ReadonlyArray<StoredRow>>({
  name: "inspector_listList",
  source: inspector_listListLua,
  buffers: true,
  keys: ({ queue, state }) => {
    const k = queueKeys(queue)
    return [k[state as "pending" | "active"], k.taskPrefix, k.lease]
  },
  // Count the page from the tail, then reverse it.
  args: ({ start, stop }) => [-(stop + 1), -(start + 1)],
  decode: (reply, { queue }) =>
    Result.map(arrayReply("inspector_listList", reply), (a) => {
      const k = queueKeys(queue)
      const rows: Array<StoredRow> = []
      for (let i = 0; i + 3 < a.length; i += 4)
        rows.push({
          key: k.task(textField(a[i]) ?? ""),
          msg: bytesField(a[i + 1]),
          result: bytesField(a[i + 2]),
          score: numField(a[i + 3])
        })
      return rows.reverse()
    })
})

/** Script `inspector_listZset`: a page of a state's zset (or a group), by ascending score. */
export const listZsetScript = defineScript<PageInput, ReadonlyArray<StoredRow>>({
  name: "inspector_listZset",
  source: inspector_listZsetLua,
  buffers: true,
  keys: ({ queue, state, group }) => {
    const k = queueKeys(queue)
    return [
      state === "aggregating" ? k.group(group!) : k[state as "scheduled" | "retry" | "archived" | "completed"],
      k.taskPrefix,
      k.dueMs
    ]
  },
  args: ({ start, stop, state }) => [start, stop, state === "scheduled" || state === "retry" ? "1" : "0"],
  decode: (reply, { queue }) =>
    Result.map(arrayReply("inspector_listZset", reply), (a) => {
      const k = queueKeys(queue)
      const rows: Array<StoredRow> = []
      for (let i = 0; i + 3 < a.length; i += 4)
        rows.push({
          key: k.task(textField(a[i]) ?? ""),
          score: numField(a[i + 1]),
          msg: bytesField(a[i + 2]),
          result: bytesField(a[i + 3])
        })
      return rows
    })
})
