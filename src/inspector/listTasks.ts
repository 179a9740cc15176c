import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listListScript, listZsetScript } from "../broker/listTasks.js"
import { runScript } from "../broker/script.js"
import type { TaskInfo } from "../steps/taskInfo.js"
import type { TaskState } from "../wire/keys.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "../broker/queues.js"
import { type StoredTask, toTaskInfoOption } from "./taskRow.js"
import type { ListOptions } from "./types.js"

/** asynq's default page size. */
export const defaultPageSize = 30

const paging = (o: ListOptions) =>
  Effect.gen(function* () {
    const page = o.page ?? 1
    const size = o.pageSize ?? defaultPageSize
    if (!Number.isInteger(page) || page < 1)
      return yield* new InvalidArgument({ field: "page", message: `page must be a whole number >= 1, got ${page}` })
    if (!Number.isInteger(size) || size < 1)
      return yield* new InvalidArgument({
        field: "pageSize",
        message: `page size must be a whole number >= 1, got ${size}`
      })
    const start = (page - 1) * size
    return { start, stop: start + size - 1 }
  })

/**
 * One page of the tasks in a state, in asynq's order: pending and active oldest first (the next
 * to run first); scheduled, retry, archived, completed and aggregating by ascending score
 * (process-at, archive time, expiry, time added). `aggregating` needs `options.group`.
 */
export const listTasks = Effect.fn("Inspector.listTasks")(function* (
  queue: string,
  state: TaskState,
  options: ListOptions = {}
) {
  const { start, stop } = yield* paging(options)
  if (state === "aggregating" && !options.group) {
    return yield* new InvalidArgument({ field: "group", message: "listing aggregating tasks needs a group name" })
  }
  yield* requireQueue(queue)
  const now = yield* Clock.currentTimeMillis
  const page = { queue, state, group: options.group, start, stop }
  const stored = yield* runScript(state === "pending" || state === "active" ? listListScript : listZsetScript, page)
  const rows: ReadonlyArray<StoredTask> = stored.map((r) => ({ ...r, state }))
  const infos: Array<TaskInfo> = []
  for (const row of rows) {
    const info = yield* toTaskInfoOption(row, now)
    if (Option.isSome(info)) infos.push(info.value)
  }
  return infos
})
