/**
 * Arranging and reading asynq's Redis layout directly with a raw client, exactly as Go asynq
 * writes it (task hash `msg`/`state`/`pending_since`/`group`, LPUSH pending, lease/retry/...
 * zsets), so the steps are tested against what asynq produces, not only against themselves.
 */
import type { Redis as IORedis } from "ioredis"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { decodeTaskMessage, emptyTaskMessage, encodeTaskMessage, type TaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testRedisLayer } from "./redis.js"

/** The Broker on this test file's database. */
export const testBrokerLayer = (): Layer.Layer<Broker, unknown> => Broker.layer.pipe(Layer.provide(testRedisLayer()))

/** The Broker (and its Redis) on any Redis, e.g. a private redis-server a test starts. */
export const brokerLayerAt = (options: RedisOptions): Layer.Layer<Broker | Redis, unknown> =>
  Broker.layer.pipe(Layer.provideMerge(Redis.layer(options)))

/**
 * The TestClock start for step tests: the real time, on a whole second (so unix-second scores are
 * exact), because daily stat keys get EXPIREAT now + 90 days, which Redis judges by its own clock.
 */
export const baseNowMs = Math.floor(Date.now() / 1000) * 1000

/** A message with asynq's defaults (retry 25, timeout 1800). */
export const makeMsg = (queue: string, id: string, over: Partial<TaskMessage> = {}): TaskMessage => ({
  ...emptyTaskMessage,
  type: "test:job",
  payload: new TextEncoder().encode(`{"id":"${id}"}`),
  id,
  queue,
  retry: 25,
  timeout: 1800,
  ...over
})

const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString()

/** asynq Enqueue: hash msg/state=pending/pending_since, LPUSH pending, SADD asynq:queues. */
export const putPending = async (c: IORedis, msg: TaskMessage, nowMs: number) => {
  const k = queueKeys(msg.queue)
  await c.hset(
    k.task(msg.id),
    "msg",
    Buffer.from(encodeTaskMessage(msg)),
    "state",
    "pending",
    "pending_since",
    ns(nowMs)
  )
  await c.lpush(k.pending, msg.id)
  await c.sadd("asynq:queues", msg.queue)
}

/** Raw bytes as a pending task (for corrupt-message cases). */
export const putPendingBytes = async (c: IORedis, queue: string, id: string, bytes: Buffer) => {
  const k = queueKeys(queue)
  await c.hset(k.task(id), "msg", bytes, "state", "pending", "pending_since", "1")
  await c.lpush(k.pending, id)
}

/** What asynq's dequeue leaves: hash state=active, id in active list and lease zset. */
export const putActive = async (c: IORedis, msg: TaskMessage, leaseSec: number) => {
  const k = queueKeys(msg.queue)
  await c.hset(k.task(msg.id), "msg", Buffer.from(encodeTaskMessage(msg)), "state", "active")
  await c.lpush(k.active, msg.id)
  await c.zadd(k.lease, leaseSec, msg.id)
}

/** A task in a zset-based state (scheduled, retry, archived, completed) with the given score. */
export const putInZset = async (
  c: IORedis,
  msg: TaskMessage,
  state: "scheduled" | "retry" | "archived" | "completed",
  score: number,
  extra: Record<string, string> = {}
) => {
  const k = queueKeys(msg.queue)
  const fields: Array<string | Buffer> = ["msg", Buffer.from(encodeTaskMessage(msg)), "state", state]
  for (const [f, v] of Object.entries(extra)) fields.push(f, v)
  await c.hset(k.task(msg.id), ...fields)
  await c.zadd(k[state], score, msg.id)
}

/** asynq AddToGroup: hash msg/state=aggregating/group, ZADD g:<group> (score = add time, s), SADD groups. */
export const putGrouped = async (c: IORedis, msg: TaskMessage, group: string, addedSec: number) => {
  const k = queueKeys(msg.queue)
  await c.hset(
    k.task(msg.id),
    "msg",
    Buffer.from(encodeTaskMessage({ ...msg, groupKey: group })),
    "state",
    "aggregating",
    "group",
    group
  )
  await c.zadd(k.group(group), addedSec, msg.id)
  await c.sadd(k.allGroups, group)
}

/** The task hash: string fields, and `msg` decoded (undefined when absent). */
export const readTask = async (c: IORedis, queue: string, id: string) => {
  const key = queueKeys(queue).task(id)
  const raw = await c.hgetallBuffer(key)
  const fields: Record<string, string> = {}
  for (const [f, v] of Object.entries(raw)) if (f !== "msg") fields[f] = v.toString()
  const msgBytes = raw.msg
  return {
    exists: Object.keys(raw).length > 0,
    fields,
    msg: msgBytes ? decodeTaskMessage(new Uint8Array(msgBytes)) : undefined,
    rawMsg: msgBytes
  }
}

/** A zset as [member, score] pairs, ascending. */
export const zsetOf = async (c: IORedis, key: string): Promise<Array<[string, number]>> => {
  const flat = await c.zrange(key, "0", "-1", "WITHSCORES")
  const out: Array<[string, number]> = []
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])])
  return out
}

/** Lifts a Promise-returning Redis call into an Effect (for arranging and checking inside `it.effect`). */
export const io = <A>(f: () => Promise<A>) => Effect.promise(f)

/** `baseNowMs` in unix seconds. */
export const baseNowSec = baseNowMs / 1000

/** The usual setup of a steps test file: this file's database emptied once, and a raw client on it (closed after the file). */
export const stepsTestDb = (): IORedis => {
  const c = rawClient()
  beforeAll(() => flushTestDb())
  afterAll(() => void c.disconnect())
  return c
}
