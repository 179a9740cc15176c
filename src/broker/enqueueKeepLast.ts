/**
 * Keep-last-while-active at enqueue (lua/enqueueKeepLast.lua) and the release of a keep-last key's
 * waiting task when its current one finishes (lua/keepLastRelease.lua).
 */
import * as Result from "effect/Result"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { coded, integerReply, unexpectedReply } from "./decode.js"
import type { TaskIdConflict } from "./errors.js"
import { defineScript } from "./script.js"
import { unixMsString, unixNanosString } from "./time.js"
import { enqueueKeepLastLua, keepLastReleaseLua } from "../redis/lua.generated.js"

/** The header naming a task's keep-last key (the worker that settles the task releases the key's waiting task). */
export const keepLastHeader = "effect-asynq-keep-last"

/** A keep-last enqueue's write: the task, its key, its latest start should it wait, how long the key lives. */
export interface KeepLastWrite {
  readonly msg: TaskMessage
  readonly nowMs: number
  readonly key: string
  /** When a waiting task is due at the latest (now + maxWait), unix ms. */
  readonly latestStartMs: number
  readonly keyTtlMs: number
}

/** What a keep-last enqueue did: the task is the key's current one (pending) or its waiting one (scheduled); whether it replaced a waiting task. */
export interface KeepLastOutcome {
  readonly waiting: boolean
  readonly replaced: boolean
}

/** Script `enqueueKeepLast`: the key's current task (pending) when none is unfinished, else its one waiting task (scheduled), replacing the one before. */
export const enqueueKeepLastScript = defineScript<KeepLastWrite, KeepLastOutcome, TaskIdConflict>({
  name: "enqueueKeepLast",
  source: enqueueKeepLastLua,
  buffers: false,
  keys: ({ msg, key }) => {
    const k = queueKeys(msg.queue)
    return [k.taskPrefix, k.pending, k.scheduled, k.keepLast(key)]
  },
  args: ({ msg, nowMs, latestStartMs, keyTtlMs }) => [
    msg.id,
    bytesArg(encodeTaskMessage(msg)),
    unixNanosString(nowMs),
    msg.queue,
    unixMsString(latestStartMs),
    Math.max(1, Math.ceil(keyTtlMs))
  ],
  decode: (reply, w) => {
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== "number")
      return Result.fail(unexpectedReply("enqueueKeepLast", reply, "an array of two integers"))
    const replaced = reply[1] === 1
    return Result.map(
      coded("enqueueKeepLast", reply[0], { msg: w.msg }, [1, 2]),
      (code): KeepLastOutcome => ({ waiting: code === 2, replaced })
    )
  }
})

/** Script `keepLastRelease`: the key's current task `id` finished; its waiting task (if any) becomes pending. Resolves with the script's code (2 released, 1 key freed, 0 nothing to do). */
export const keepLastReleaseScript = defineScript<
  { readonly queue: string; readonly key: string; readonly id: string; readonly nowMs: number },
  number
>({
  name: "keepLastRelease",
  source: keepLastReleaseLua,
  buffers: false,
  keys: ({ queue, key }) => {
    const k = queueKeys(queue)
    return [k.taskPrefix, k.pending, k.scheduled, k.keepLast(key)]
  },
  args: ({ queue, id, nowMs }) => [id, unixNanosString(nowMs), queue],
  decode: (reply) => integerReply("keepLastRelease", reply)
})
