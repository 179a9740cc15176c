/**
 * The lease for large messages (issue 34): in one MULTI, dequeueLease in ids mode (the script reads
 * no message: it returns the ids and writes them into asynq:{q}:leasing), then
 * `SORT asynq:{q}:leasing BY nosort GET asynq:{q}:t:*->msg` (the messages, in the list's order,
 * nil for an id without a msg) and `DEL asynq:{q}:leasing`. A message is then copied once by Redis
 * (into SORT's reply) instead of three times (into Lua, into the script's reply); the lease and
 * the reads stay atomic. Costs more than the script alone for small messages (the MULTI, the list,
 * SORT): the worker takes this way only for a queue whose recent messages are large (MessageSizes).
 * Only where the transport sends a MULTI in one round trip (`scriptSorted`: a single node over
 * ioredis; a Cluster denies SORT's GET option).
 */
import * as Effect from "effect/Effect"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { unexpectedReply } from "./decode.js"
import { type DequeueLeaseInput, type DequeueLeaseReply, dequeueLeaseReply, dequeueLeaseScript } from "./dequeueLease.js"

/** The list the lease scripts' ids mode writes the ids into (lua/includes/leaseTasks.lua derives the same name). */
export const leasingListKey = (queue: string): string => `${queueKeys(queue).prefix}leasing`

/** SORT's GET pattern for the leased tasks' messages. */
export const leasedMessagePattern = (queue: string): string => `${queueKeys(queue).taskPrefix}*->msg`

/**
 * An ids-mode lease reply (ids, then the flow limit's wait when it cut the call short) and SORT's
 * messages put together as the script-only reply (id1, msg1, …, then the wait), so the usual
 * decoder reads it. Undefined when they do not match (then the reply is unexpected).
 */
export const mergeLeasedMessages = (ids: unknown, messages: unknown): Array<unknown> | undefined => {
  if (!Array.isArray(ids) || !Array.isArray(messages)) return undefined
  const tail = ids.length > 0 && typeof ids[ids.length - 1] === "number"
  const n = tail ? ids.length - 1 : ids.length
  if (messages.length !== n) return undefined
  const out: Array<unknown> = new Array(2 * n + (tail ? 1 : 0))
  for (let i = 0; i < n; i++) {
    out[2 * i] = ids[i]
    out[2 * i + 1] = messages[i]
  }
  if (tail) out[2 * n] = ids[n]
  return out
}

/** Whether this connection can lease the large-message way (the transport sends a MULTI in one round trip). */
export const canLeaseByIds = (broker: { readonly redis: { readonly scriptSorted?: unknown } }): boolean => broker.redis.scriptSorted !== undefined

/**
 * dequeueLease the large-message way (the module comment): the same reply as `dequeueLeaseScript`
 * for the same input and Redis state. Falls back to the script alone where the transport has no
 * `scriptSorted`.
 */
export const dequeueLeaseByIds = (input: DequeueLeaseInput): Effect.Effect<DequeueLeaseReply, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) => {
    const withIds: DequeueLeaseInput = { ...input, idsOnly: true }
    if (redis.scriptSorted === undefined) {
      const plain: DequeueLeaseInput = { ...input, idsOnly: false }
      return Effect.flatMap(redis.scriptBuffer(dequeueLeaseScript.name, dequeueLeaseScript.keys(plain), dequeueLeaseScript.args(plain)), (r) =>
        Effect.fromResult(dequeueLeaseScript.decode(r, plain))
      )
    }
    const sent = redis.scriptSorted(
      dequeueLeaseScript.name,
      dequeueLeaseScript.keys(withIds),
      dequeueLeaseScript.args(withIds),
      leasingListKey(input.queue),
      leasedMessagePattern(input.queue)
    )
    return Effect.flatMap(sent, ([ids, messages]) => {
      const merged = mergeLeasedMessages(ids, messages)
      return merged === undefined
        ? Effect.fail(unexpectedReply("dequeueLease", [ids, messages], "the leased ids and as many messages"))
        : Effect.fromResult(dequeueLeaseReply(merged))
    })
  })
