/**
 * Holding a queue's leases until a time (not asynq's): `hold_until` in the queue's flow-control
 * hash `asynq:{q}:flow`, read first where tasks are leased (lua/includes/flowLimit.lua). Written
 * when a handler returns `RateLimited` with `holdQueue`.
 */
import { queueKeys } from "../wire/keys.js"
import { integerReply } from "./decode.js"
import { defineScript } from "./script.js"
import { holdQueueLua } from "../redis/lua.generated.js"

/** Script `holdQueue`: no task of the queue is leased before `untilMs` (a later hold already stored is kept). Resolves with the hold in effect, unix ms. */
export const holdQueueScript = defineScript<{ readonly queue: string; readonly untilMs: number }, number>({
  name: "holdQueue",
  source: holdQueueLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).flow],
  args: ({ untilMs }) => [Math.ceil(untilMs)],
  decode: (reply) => integerReply("holdQueue", reply)
})
