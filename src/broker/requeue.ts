import { Effect } from "effect"
import { type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { leaseLost } from "./leaseLost.js"
import { asInteger } from "./replies.js"
import { unixNanosString } from "./time.js"

/** Script `requeue`: active -> head of pending. Fails with LeaseLost when the task is no longer active. */
export const requeueActive = Effect.fnUntraced(function* (msg: TaskMessage, nowMs: number) {
  const { redis } = yield* Broker
  const k = queueKeys(msg.queue)
  const reply = yield* redis.script("requeue", [k.active, k.lease, k.pending, k.taskPrefix], [msg.id, unixNanosString(nowMs)])
  if ((yield* asInteger("requeue", reply)) !== 1) return yield* Effect.fail(leaseLost(msg.queue, msg.id, "requeue"))
})
