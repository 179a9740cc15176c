/**
 * Per-key limits (not asynq's): giving a limit key its place back when one of its tasks leaves
 * active (lua/releaseLimitKey.lua). The waiting and the lease themselves are in the enqueue and
 * lease scripts (lua/includes/writeKeyedTask.lua, lua/includes/keyLimits.lua).
 */
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { integerReply } from "./decode.js"
import { defineScript } from "./script.js"
import { releaseLimitKeyLua } from "../redis/lua.generated.js"

/** A keyed task that left active: its queue, id and limit key, and now (unix ms). */
export interface LimitKeyRelease {
  readonly queue: string
  readonly id: string
  readonly limitKey: string
  readonly nowMs: number
}

/**
 * Script `releaseLimitKey`: the task leaves its key's leased set; a key with waiting tasks is
 * brought forward in the ring to now and idle workers are woken. True when it was brought forward.
 */
export const releaseLimitKeyScript = defineScript<LimitKeyRelease, boolean>({
  name: "releaseLimitKey",
  source: releaseLimitKeyLua,
  buffers: false,
  keys: ({ queue, limitKey }) => {
    const k = queueKeys(queue)
    return [k.limitKeyActive(limitKey), k.limitKeyList(limitKey), k.limitKeys, k.limitKeyRate(limitKey), k.keyIndex]
  },
  args: ({ id, limitKey, nowMs, queue }) => [id, limitKey, Math.floor(nowMs), queue],
  decode: (reply) => Result.map(integerReply("releaseLimitKey", reply), (n) => n === 1)
})
