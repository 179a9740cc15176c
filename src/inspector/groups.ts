import * as Effect from "effect/Effect"
import { groupStatsScript } from "../broker/queueInfo.js"
import { runScript } from "../broker/script.js"
import { requireQueue } from "../broker/queues.js"
import type { GroupInfo } from "./types.js"

/** Every group of a queue with its number of aggregating tasks, sorted by name (asynq's Groups). */
export const groups = Effect.fn("Inspector.groups")(function* (queue: string) {
  yield* requireQueue(queue)
  const out: Array<GroupInfo> = [...(yield* runScript(groupStatsScript, { queue }))]
  return out.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0))
})
