import { queueKeys } from "../wire/keys.js"
import { doneOr } from "./decode.js"
import type { InvalidState } from "./errors.js"
import { defineScript } from "./script.js"
import { unixSeconds } from "./time.js"
import { pauseQueueLua, unpauseQueueLua } from "../redis/lua.generated.js"

/** Script `pauseQueue`: marks the queue paused; InvalidState when it is already paused. */
export const pauseQueueScript = defineScript<{ readonly queue: string; readonly nowMs: number }, void, InvalidState>({
  name: "pauseQueue",
  source: pauseQueueLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).paused],
  args: ({ nowMs }) => [unixSeconds(nowMs)],
  decode: (reply, i) => doneOr("pauseQueue", reply, i, undefined)
})

/** Script `unpauseQueue`; InvalidState when the queue is not paused. */
export const unpauseQueueScript = defineScript<{ readonly queue: string }, void, InvalidState>({
  name: "unpauseQueue",
  source: unpauseQueueLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).paused],
  args: () => [],
  decode: (reply, i) => doneOr("unpauseQueue", reply, i, undefined)
})
