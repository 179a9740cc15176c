import { Effect } from "effect"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { leaseLost, ownUniqueKey } from "./leaseLost.js"
import { asInteger } from "./replies.js"
import { statsExpireAt, unixSeconds } from "./time.js"

/**
 * Script `complete`: active -> deleted, or -> completed when `msg.retention` > 0 (the message is
 * stored with `completedAt` = now). Fails with LeaseLost when the task is no longer active.
 */
export const completeActive = Effect.fn("Broker.complete")(function* (msg: TaskMessage, nowMs: number) {
  const { redis } = yield* Broker
  const k = queueKeys(msg.queue)
  const nowSec = unixSeconds(nowMs)
  const keep = msg.retention > 0
  const args = keep
    ? [msg.id, statsExpireAt(nowMs), "keep", nowSec + msg.retention, bytesArg(encodeTaskMessage({ ...msg, completedAt: nowSec }))]
    : [msg.id, statsExpireAt(nowMs), "delete", 0, ""]
  const keys = [k.active, k.lease, k.completed, k.taskPrefix, k.processed(nowMs), k.processedTotal, ...ownUniqueKey(k.prefix, msg.uniqueKey)]
  const n = yield* asInteger("complete", yield* redis.script("complete", keys, args))
  if (n !== 1) return yield* Effect.fail(leaseLost(msg.queue, msg.id, "complete"))
  return keep ? ("completed" as const) : ("deleted" as const)
})
