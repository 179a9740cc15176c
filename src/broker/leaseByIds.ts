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
import {
  type DequeueLeaseInput,
  type DequeueLeaseReply,
  dequeueLeaseReply,
  dequeueLeaseScript
} from "./dequeueLease.js"
import { runScript } from "./script.js"

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
export const canLeaseByIds = (broker: { readonly redis: { readonly scriptSorted?: unknown } }): boolean =>
  broker.redis.scriptSorted !== undefined

/** The SORT read that goes with an ids-mode lease of `queue` in its MULTI (`ScriptCall.sorted`). */
export const sortedLeaseRead = (queue: string) => ({
  list: leasingListKey(queue),
  get: leasedMessagePattern(queue)
})

/**
 * An ids-mode lease's reply and its SORT read's (`[ids, sorted]`) read as the script-only reply.
 * When Redis refused SORT's GET option (an ACL user without read access to every key, which Redis 7
 * requires for GET patterns), the messages of the tasks the script leased are read by id (they are
 * this call's now), and this connection leases the script-only way from then on
 * (MessageSizes.refuseSort).
 */
export const landSortedLease = (
  queue: string,
  ids: unknown,
  sorted: unknown
): Effect.Effect<DequeueLeaseReply, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis, messageSizes }) => {
    const refused = (error: Error) =>
      Effect.logWarning(
        `queue "${queue}": Redis refused SORT … GET (${error.message}); large messages are leased through the script from now on`
      ).pipe(
        Effect.andThen(Effect.sync(() => messageSizes.refuseSort())),
        Effect.andThen(
          redis.use("script dequeueLease", async (c) => {
            const p = c.pipeline()
            const prefix = queueKeys(queue).taskPrefix
            if (Array.isArray(ids))
              for (const id of ids) if (typeof id !== "number") p.hgetBuffer(prefix + String(id), "msg")
            const replies = (await p.exec()) ?? []
            return replies.map(([e, msg]) => {
              if (e) throw e
              return msg
            })
          })
        )
      )
    return Effect.flatMap(sorted instanceof Error ? refused(sorted) : Effect.succeed(sorted), (messages) => {
      const merged = mergeLeasedMessages(ids, messages)
      return merged === undefined
        ? Effect.fail(unexpectedReply("dequeueLease", [ids, messages], "the leased ids and as many messages"))
        : Effect.fromResult(dequeueLeaseReply(merged))
    })
  })

/**
 * dequeueLease the large-message way (the module comment): the same reply as `dequeueLeaseScript`
 * for the same input and Redis state. Falls back to the script alone where the transport has no
 * `scriptSorted`; a refused SORT is handled as `landSortedLease` says.
 */
export const dequeueLeaseByIds = (input: DequeueLeaseInput): Effect.Effect<DequeueLeaseReply, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) => {
    if (redis.scriptSorted === undefined) return runScript(dequeueLeaseScript, { ...input, idsOnly: false })
    const withIds: DequeueLeaseInput = { ...input, idsOnly: true }
    const read = sortedLeaseRead(input.queue)
    const sent = redis.scriptSorted(
      dequeueLeaseScript.name,
      dequeueLeaseScript.keys(withIds),
      dequeueLeaseScript.args(withIds),
      read.list,
      read.get
    )
    return Effect.flatMap(sent, ([ids, sorted]) => landSortedLease(input.queue, ids, sorted))
  })
