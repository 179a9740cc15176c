/**
 * asynq's exact Redis layout, written with a raw client: (1) `restoreSnapshot` loads a Go asynq
 * capture from test/fixtures/asynq-wire/states/*.json key for key (protobuf values base64 →
 * bytes, `_decoded` annotations dropped); (2) `put*` write single tasks the way Go asynq's
 * scripts do (task hash msg/state/pending_since/group, LPUSH pending, lease and state zsets).
 * Tests that arrange state this way prove the code reads what Go asynq writes.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Redis as IORedis } from "ioredis"
import { encodeTaskMessage, emptyTaskMessage, type TaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"

export type StateFixture =
  | "a-enqueue"
  | "b-scheduled"
  | "c-unique"
  | "d-group"
  | "e-retry"
  | "f-skipretry-archived"
  | "g-completed"
  | "h-server-running"
  | "i-scheduler"
  | "j-paused"

interface KeyDump {
  readonly type: "hash" | "list" | "zset" | "set" | "string"
  readonly value: unknown
  readonly ttl_ms: number
}
export interface Snapshot {
  readonly scenario: string
  readonly now_unix: number
  readonly keys: Readonly<Record<string, KeyDump>>
}

const statesDir = new URL("../fixtures/asynq-wire/states/", import.meta.url)

export const loadSnapshot = (name: StateFixture): Snapshot =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`${name}.json`, statesDir)), "utf8")) as Snapshot

const b64 = (s: string) => Buffer.from(s, "base64")

/** Values the capture stores as base64 protobuf (see the fixtures README). */
const isProtoString = (key: string) => key.startsWith("asynq:servers:{")
const isProtoHashField = (key: string, field: string) =>
  key.startsWith("asynq:workers:{") || (/^asynq:\{.*\}:t:/.test(key) && field === "msg")
const isProtoListItem = (key: string) => key.startsWith("asynq:schedulers:{")
const isProtoZsetMember = (key: string) => key.startsWith("asynq:scheduler_history:")

/** Writes every key of a capture (no TTLs: the capture's clock is not the test's). Returns the snapshot. */
export const restoreSnapshot = async (c: IORedis, name: StateFixture): Promise<Snapshot> => {
  const snap = loadSnapshot(name)
  for (const [key, dump] of Object.entries(snap.keys)) {
    await c.del(key)
    switch (dump.type) {
      case "string":
        await c.set(key, isProtoString(key) ? b64(dump.value as string) : (dump.value as string))
        break
      case "hash": {
        const args: Array<string | Buffer> = []
        for (const [f, v] of Object.entries(dump.value as Record<string, unknown>)) {
          if (f.endsWith("_decoded")) continue
          args.push(f, isProtoHashField(key, f) ? b64(v as string) : (v as string))
        }
        await c.hset(key, ...args)
        break
      }
      case "list": {
        const items = (dump.value as Array<string>).map((v) => (isProtoListItem(key) ? b64(v) : v))
        // LRANGE order, head first: RPUSH keeps it.
        if (items.length > 0) await c.rpush(key, ...items)
        break
      }
      case "zset":
        for (const [member, score] of dump.value as Array<[string, number]>)
          await c.zadd(key, score, isProtoZsetMember(key) ? b64(member) : member)
        break
      case "set":
        if ((dump.value as Array<string>).length > 0) await c.sadd(key, ...(dump.value as Array<string>))
        break
    }
  }
  return snap
}

/** A message with asynq's defaults (retry 25, timeout 1800 s). */
export const asynqMsg = (queue: string, id: string, over: Partial<TaskMessage> = {}): TaskMessage => ({
  ...emptyTaskMessage,
  type: "email:send",
  payload: Buffer.from(JSON.stringify({ id })),
  id,
  queue,
  retry: 25,
  timeout: 1800,
  ...over
})

const encoded = (m: TaskMessage) => Buffer.from(encodeTaskMessage(m))
const nanos = (ms: number) => (BigInt(ms) * 1_000_000n).toString()

/** Go asynq Enqueue: hash msg/state=pending/pending_since (ns), LPUSH pending, SADD asynq:queues. */
export const putPending = async (
  c: IORedis,
  m: TaskMessage,
  enqueuedAtMs: number,
  extra: Record<string, string> = {}
) => {
  const k = queueKeys(m.queue)
  await c.hset(
    k.task(m.id),
    "msg",
    encoded(m),
    "state",
    "pending",
    "pending_since",
    nanos(enqueuedAtMs),
    ...Object.entries(extra).flat()
  )
  await c.lpush(k.pending, m.id)
  await c.sadd("asynq:queues", m.queue)
}

/** Go asynq Dequeue: hash state=active (pending_since removed), id in active (LPUSH) and lease (score = expiry, s). */
export const putActive = async (c: IORedis, m: TaskMessage, leaseExpiresSec: number) => {
  const k = queueKeys(m.queue)
  await c.hset(k.task(m.id), "msg", encoded(m), "state", "active")
  await c.lpush(k.active, m.id)
  await c.zadd(k.lease, leaseExpiresSec, m.id)
  await c.sadd("asynq:queues", m.queue)
}

/** A task in a zset state with its score (unix s): scheduled/retry process-at, archived time, completed expiry. */
export const putInZset = async (
  c: IORedis,
  m: TaskMessage,
  state: "scheduled" | "retry" | "archived" | "completed",
  score: number,
  extra: Record<string, string | Buffer> = {}
) => {
  const k = queueKeys(m.queue)
  await c.hset(k.task(m.id), "msg", encoded(m), "state", state, ...Object.entries(extra).flat())
  await c.zadd(k[state], score, m.id)
  await c.sadd("asynq:queues", m.queue)
}

/** Go asynq AddToGroup: hash msg/state=aggregating/group, ZADD g:<group> (score = added, s), SADD groups. */
export const putAggregating = async (c: IORedis, m: TaskMessage, group: string, addedSec: number) => {
  const k = queueKeys(m.queue)
  await c.hset(k.task(m.id), "msg", encoded({ ...m, groupKey: group }), "state", "aggregating", "group", group)
  await c.zadd(k.group(group), addedSec, m.id)
  await c.sadd(k.allGroups, group)
  await c.sadd("asynq:queues", m.queue)
}

/** A uniqueness lock held by a task (value = task id), and the task hash's unique_key field. */
export const putUniqueLock = async (c: IORedis, queue: string, id: string, lockKey: string) => {
  await c.set(lockKey, id, "EX", 3600)
  await c.hset(queueKeys(queue).task(id), "unique_key", lockKey)
}
