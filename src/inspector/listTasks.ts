import { Clock, Effect, Option } from "effect"
import { Broker } from "../broker/Broker.js"
import type { TaskInfo } from "../steps/taskInfo.js"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import { asArray, bytes, num, text } from "./replies.js"
import { type StoredTask, toTaskInfoOption } from "./taskRow.js"
import type { ListOptions } from "./types.js"

/** asynq's default page size. */
export const defaultPageSize = 30

const paging = (o: ListOptions) =>
  Effect.gen(function* () {
    const page = o.page ?? 1
    const size = o.pageSize ?? defaultPageSize
    if (!Number.isInteger(page) || page < 1) return yield* new InvalidArgument({ field: "page", message: `page must be a whole number >= 1, got ${page}` })
    if (!Number.isInteger(size) || size < 1) return yield* new InvalidArgument({ field: "pageSize", message: `page size must be a whole number >= 1, got ${size}` })
    const start = (page - 1) * size
    return { start, stop: start + size - 1 }
  })

/**
 * One page of the tasks in a state, in asynq's order: pending and active oldest first (the next
 * to run first); scheduled, retry, archived, completed and aggregating by ascending score
 * (process-at, archive time, expiry, time added). `aggregating` needs `options.group`.
 */
export const listTasks = Effect.fn("Inspector.listTasks")(function* (queue: string, state: TaskState, options: ListOptions = {}) {
  const { start, stop } = yield* paging(options)
  if (state === "aggregating" && !options.group) {
    return yield* new InvalidArgument({ field: "group", message: "listing aggregating tasks needs a group name" })
  }
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const rows: Array<StoredTask> = []
  if (state === "pending" || state === "active") {
    // LPUSH puts the newest at the head: count the page from the tail, then reverse it.
    const reply = yield* asArray("inspector_listList", yield* redis.scriptBuffer("inspector_listList", [k[state], k.taskPrefix, k.lease], [-(stop + 1), -(start + 1)]))
    for (let i = 0; i + 3 < reply.length; i += 4) {
      const id = text(reply[i]) ?? ""
      rows.push({ key: k.task(id), msg: bytes(reply[i + 1]), result: bytes(reply[i + 2]), score: num(reply[i + 3]), state })
    }
    rows.reverse()
  } else {
    const source = state === "aggregating" ? k.group(options.group!) : k[state]
    const reply = yield* asArray("inspector_listZset", yield* redis.scriptBuffer("inspector_listZset", [source, k.taskPrefix], [start, stop]))
    for (let i = 0; i + 3 < reply.length; i += 4) {
      const id = text(reply[i]) ?? ""
      rows.push({ key: k.task(id), score: num(reply[i + 1]), msg: bytes(reply[i + 2]), result: bytes(reply[i + 3]), state })
    }
  }
  const infos: Array<TaskInfo> = []
  for (const row of rows) {
    const info = yield* toTaskInfoOption(row, now)
    if (Option.isSome(info)) infos.push(info.value)
  }
  return infos
})
