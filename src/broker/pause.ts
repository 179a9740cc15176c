import { Result } from "effect"
import { queueKeys } from "../wire/keys.js"
import { coded, integerReply } from "./decode.js"
import type { InvalidState } from "./errors.js"
import { defineScript } from "./script.js"
import { unixSeconds } from "./time.js"

/** Script `pause`: marks the queue paused; InvalidState when it is already paused. */
export const pauseScript = defineScript<{ readonly queue: string; readonly nowMs: number }, void, InvalidState>({
  name: "pause",
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).paused],
  args: ({ nowMs }) => [unixSeconds(nowMs)],
  decode: (reply, i) => Result.flatMap(integerReply("pause", reply), (n) => Result.map(coded("pause", n, i, [1]), () => undefined))
})

/** Script `unpause`; InvalidState when the queue is not paused. */
export const unpauseScript = defineScript<{ readonly queue: string }, void, InvalidState>({
  name: "unpause",
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).paused],
  args: () => [],
  decode: (reply, i) => Result.flatMap(integerReply("unpause", reply), (n) => Result.map(coded("unpause", n, i, [1]), () => undefined))
})
