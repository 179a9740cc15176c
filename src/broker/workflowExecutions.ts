/**
 * Raw reads of workflow executions for the inspector: a bounded page of a control queue's
 * execution hashes (SCAN with MATCH on the queue's `{q}` slot pattern and a COUNT), one execution's
 * whole hash, which of several control queues holds an execution, and the durable clocks of an
 * execution still waiting (ZSCAN of the control queue's scheduled set, MATCH on its clock ids).
 * Nothing here writes.
 */
import type { Cluster, Redis as IORedis } from "ioredis"
import * as Effect from "effect/Effect"
import type { RedisClient } from "../redis/Redis.js"
import { keySlot } from "../redis/keySlot.js"
import { isClusterClient } from "../redis/ioredisService.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { Broker } from "./Broker.js"

/** A glob pattern matching `s` literally (SCAN MATCH treats `* ? [ ] \` as special). */
const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`)

/**
 * The node that serves `key`: the client itself on a single Redis, on a Redis Cluster the master of
 * the key's slot (SCAN and ZSCAN are per node; every key of a control queue is in one slot).
 */
const nodeOf = (c: RedisClient, key: string): IORedis | Cluster => {
  if (!isClusterClient(c)) return c
  const slot = keySlot(key)
  const addr = (c as unknown as { slots: Array<Array<string> | undefined> }).slots[slot]?.[0]
  const node =
    addr === undefined ? undefined : c.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === addr)
  return node ?? c
}

/** One page of a control queue's executions: the ids SCAN found and the cursor to go on from ("0": done). */
export interface ExecutionScanPage {
  readonly cursor: string
  readonly executionIds: ReadonlyArray<string>
}

/**
 * One SCAN call for a control queue's execution hashes, from `cursor` ("0" first), examining about
 * `count` keys of the node (Redis's COUNT): bounded work per call, whatever the keyspace's size.
 */
export const scanExecutions = Effect.fn("Broker.scanExecutions")(function* (
  queue: string,
  cursor: string,
  count: number
) {
  const { redis } = yield* Broker
  const prefix = workflowExecutionKey(queue, "")
  const [next, keys] = yield* redis.use("workflow executions scan", (c) =>
    nodeOf(c, prefix).scan(cursor, "MATCH", `${globEscape(prefix)}*`, "COUNT", count)
  )
  return { cursor: next, executionIds: keys.map((k) => k.slice(prefix.length)) } satisfies ExecutionScanPage
})

/** Some fields of several executions of one control queue (one pipeline, one slot): undefined for an absent field. */
export const readExecutionsFields = Effect.fn("Broker.readExecutionsFields")(function* (
  queue: string,
  executionIds: ReadonlyArray<string>,
  fields: ReadonlyArray<string>
) {
  if (executionIds.length === 0) return [] as ReadonlyArray<ReadonlyArray<string | undefined>>
  const { redis } = yield* Broker
  const replies = yield* redis.use("workflow executions read", (c) => {
    const p = c.pipeline()
    for (const id of executionIds) p.hmget(workflowExecutionKey(queue, id), ...fields)
    return p.exec()
  })
  return (replies ?? []).map(([err, v]) => {
    if (err) throw err
    return (v as Array<string | null>).map((x) => x ?? undefined)
  }) as ReadonlyArray<ReadonlyArray<string | undefined>>
})

/** The whole hash of one execution (HGETALL), or undefined when there is none. */
export const readExecution = Effect.fn("Broker.readExecution")(function* (queue: string, executionId: string) {
  const { redis } = yield* Broker
  const h = yield* redis.use("workflow execution read", (c) => c.hgetall(workflowExecutionKey(queue, executionId)))
  return Object.keys(h).length === 0 ? undefined : (new Map(Object.entries(h)) as ReadonlyMap<string, string>)
})

/** Which of these control queues holds the execution (EXISTS on each, one round trip per slot), or undefined. */
export const findExecutionQueue = Effect.fn("Broker.findExecutionQueue")(function* (
  queues: ReadonlyArray<string>,
  executionId: string
) {
  const { redis } = yield* Broker
  for (const queue of queues) {
    const n = yield* redis.use("workflow execution exists", (c) => c.exists(workflowExecutionKey(queue, executionId)))
    if (n === 1) return queue
  }
  return undefined
})

/** A durable clock of an execution still scheduled: its name and due time (unix ms). */
export interface ScheduledClock {
  readonly name: string
  readonly dueAtMs: number
}

/**
 * The execution's clocks still scheduled on its control queue: ZSCAN of the queue's scheduled set
 * with MATCH on the execution's clock task ids (`clock:<execution id>:<name>`), in calls of
 * `count`; one pass over that queue's scheduled tasks (its sleeping clocks and retried runs).
 */
export const scheduledClocks = Effect.fn("Broker.scheduledClocks")(function* (
  queue: string,
  executionId: string,
  count = 1000
) {
  const { redis } = yield* Broker
  const key = queueKeys(queue).scheduled
  const prefix = `clock:${executionId}:`
  const out: Array<ScheduledClock> = []
  let cursor = "0"
  do {
    const [next, flat] = yield* redis.use("workflow clocks scan", (c) =>
      nodeOf(c, key).zscan(key, cursor, "MATCH", `${globEscape(prefix)}*`, "COUNT", count)
    )
    for (let i = 0; i + 1 < flat.length; i += 2)
      out.push({ name: flat[i]!.slice(prefix.length), dueAtMs: Number(flat[i + 1]) * 1000 })
    cursor = next
  } while (cursor !== "0")
  return out as ReadonlyArray<ScheduledClock>
})
