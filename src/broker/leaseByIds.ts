/**
 * The lease for large messages: dequeueLease in ids mode (the script reads no message; it leases
 * the tasks and returns their ids), then the leased tasks' messages read with `HGET
 * asynq:{q}:t:<id> msg`, pipelined in one more round trip. Redis then copies a message once,
 * straight into HGET's reply, instead of three times (into Lua, out of Lua, into the script's
 * reply). The lease itself stays one atomic script call, resent as any script call when a reply
 * is lost; the reads change nothing. Costs a round trip and a command per task more than the script
 * alone, so the worker takes this way only for a queue whose recent messages are large
 * (MessageSizes). Where the transport reads hash fields (`hashFields`: ioredis, single node,
 * Sentinel and Cluster; the reads share the queue's slot).
 */
import * as Effect from "effect/Effect"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { unexpectedReply } from "./decode.js"
import {
  type DequeueLeaseInput,
  type DequeueLeaseReply,
  dequeueLeaseReply,
  dequeueLeaseScript
} from "./dequeueLease.js"
import { runScript } from "./script.js"

/** How many ids an ids-mode reply holds (the flow limit's wait, a number, may end it). */
const leasedCount = (ids: ReadonlyArray<unknown>): number =>
  ids.length > 0 && typeof ids[ids.length - 1] === "number" ? ids.length - 1 : ids.length

/**
 * An ids-mode lease reply (ids, then the flow limit's wait when it cut the call short) and the
 * messages read by id put together as the script-only reply (id1, msg1, …, then the wait), so the
 * usual decoder reads it. Undefined when they do not match (then the reply is unexpected).
 */
export const mergeLeasedMessages = (ids: unknown, messages: unknown): Array<unknown> | undefined => {
  if (!Array.isArray(ids) || !Array.isArray(messages)) return undefined
  const n = leasedCount(ids)
  if (messages.length !== n) return undefined
  const out: Array<unknown> = new Array(2 * n + (ids.length - n))
  for (let i = 0; i < n; i++) {
    out[2 * i] = ids[i]
    out[2 * i + 1] = messages[i]
  }
  if (ids.length > n) out[2 * n] = ids[n]
  return out
}

/** Whether this connection can lease the large-message way (its transport reads hash fields). */
export const canLeaseByIds = (broker: { readonly redis: { readonly hashFields?: unknown } }): boolean =>
  broker.redis.hashFields !== undefined

/**
 * dequeueLease the large-message way (the module comment): the same reply as `dequeueLeaseScript`
 * for the same input and Redis state. Falls back to the script alone where the transport reads no
 * hash fields. A task whose message is gone by the time it is read (nothing in this library
 * deletes an active task's hash) comes back as a dangling id, as the script reports one. When the
 * reads fail, the call fails: its tasks are leased under the call's score, which the caller gives
 * back (steps/dequeueLease.ts, as for a lost reply).
 */
export const dequeueLeaseByIds = (input: DequeueLeaseInput): Effect.Effect<DequeueLeaseReply, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) => {
    const read = redis.hashFields
    if (read === undefined) return runScript(dequeueLeaseScript, { ...input, idsOnly: false })
    const withIds: DequeueLeaseInput = { ...input, idsOnly: true }
    const leased = redis.scriptBuffer(
      dequeueLeaseScript.name,
      dequeueLeaseScript.keys(withIds),
      dequeueLeaseScript.args(withIds)
    )
    return Effect.flatMap(leased, (ids) => {
      if (!Array.isArray(ids)) return Effect.fail(unexpectedReply("dequeueLease", ids, "an array of ids (ids mode)"))
      const n = leasedCount(ids)
      const prefix = queueKeys(input.queue).taskPrefix
      const keys: Array<string> = new Array(n)
      for (let i = 0; i < n; i++) keys[i] = prefix + String(ids[i])
      const messages = n === 0 ? Effect.succeed([]) : read(keys, "msg")
      return Effect.flatMap(messages, (msgs) => {
        const merged = mergeLeasedMessages(ids, msgs)
        return merged === undefined
          ? Effect.fail(unexpectedReply("dequeueLease", [ids, msgs], "the leased ids and as many messages"))
          : Effect.fromResult(dequeueLeaseReply(merged))
      })
    })
  })
