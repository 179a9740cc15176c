import { Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { queueKeys } from "../wire/keys.js"
import { requireQueue } from "./requireQueue.js"
import { asArray, num, text } from "./replies.js"
import type { GroupInfo } from "./types.js"

/** Every group of a queue with its number of aggregating tasks, sorted by name (asynq's Groups). */
export const groups = Effect.fn("Inspector.groups")(function* (queue: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* asArray("inspector_groupStats", yield* redis.script("inspector_groupStats", [k.allGroups, k.groupPrefix], []))
  const out: Array<GroupInfo> = []
  for (let i = 0; i + 1 < reply.length; i += 2) out.push({ group: text(reply[i]) ?? "", size: num(reply[i + 1]) ?? 0 })
  return out.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0))
})
