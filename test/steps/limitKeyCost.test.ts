/**
 * What per-key limits cost in Redis, counted from the server's own command statistics (INFO
 * commandstats, on a redis-server of this file's own). A queue without keyed tasks pays nothing:
 * the enqueue, the lease and the completion of its tasks run exactly the commands they ran before
 * the feature (the lease's one EXISTS names the ring of keys too). A keyed task's own cost is
 * stated here as well.
 */
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { completeMany } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue, type EnqueueItem } from "../../src/steps/enqueue.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { baseNowMs, brokerLayerAt } from "../support/arrange.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

let server: RedisServerHandle
let c: IORedis
beforeAll(async () => {
  server = await startRedisServer()
  c = new IORedis(server.url, { maxRetriesPerRequest: 1 })
})
afterAll(async () => {
  c.disconnect()
  await server.stop()
})

const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      return yield* eff
    }).pipe(Effect.provide(Layer.merge(brokerLayerAt({ url: server.url }), TestClock.layer()))) as Effect.Effect<A>
  )

// Not data commands: the scripts' own calls and a connection's, and the queue's registration.
const connection = new Set([
  "evalsha",
  "eval",
  "script",
  "info",
  "config",
  "hello",
  "quit",
  "ping",
  "select",
  "client",
  "auth",
  "sadd",
  "smembers",
  "sismember"
])

/** The data commands `eff` runs inside its scripts. */
const commandsOf = async (eff: Effect.Effect<unknown, unknown, Broker>) => {
  await c.config("RESETSTAT")
  await run(eff)
  const info = await c.info("commandstats")
  const out: Record<string, number> = {}
  for (const m of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm))
    if (!connection.has(m[1]!.split("|")[0]!)) out[m[1]!] = Number(m[2])
  return out
}

/** Ten tasks: enqueued one call each, leased in one call, completed in one call. */
const lifecycle = async (queue: string, options: EnqueueOptions) => {
  // The queue's registration (SADD asynq:queues) is sent once per minute: done before counting.
  await run(enqueue("warm", {}, { queue, taskId: "warm" }))
  await run(dequeueLease({ queues: [queue], count: 1 }).pipe(Effect.flatMap((r) => completeMany([r.tasks[0]!.msg]))))
  const items: Array<EnqueueItem> = Array.from({ length: 10 }, (_, i) => ({
    type: "t",
    payload: { i },
    options: { queue, ...options }
  }))
  const enqueued = await commandsOf(
    Effect.forEach(items, (it) => enqueue(it.type as string, it.payload, it.options), { discard: true })
  )
  const indexAfterEnqueue = await c.smembers(`asynq:{${queue}}:keyindex`)
  let leased: ReadonlyArray<{ readonly msg: import("../../src/wire/TaskMessage.js").TaskMessage }> = []
  const lease = await commandsOf(
    Effect.map(dequeueLease({ queues: [queue], count: 10 }), (r) => {
      leased = r.tasks
    })
  )
  expect(leased).toHaveLength(10)
  const indexAfterLease = await c.smembers(`asynq:{${queue}}:keyindex`)
  const completed = await commandsOf(completeMany(leased.map((t) => t.msg)))
  return { enqueued, lease, completed, indexAfterEnqueue, indexAfterLease }
}

describe("per-key limits' cost (INFO commandstats)", () => {
  it("a queue without keyed tasks runs the commands it ran before; a keyed task's cost is a few commands more", async () => {
    const plain = await lifecycle("cost-plain", {})
    // Per task: EXISTS (id taken?), LPUSH, HSET; the first push on an empty list also looks for a
    // parked worker (HGETALL) and wakes the workers (PUBLISH).
    expect(plain.enqueued).toEqual({ exists: 10, lpush: 10, hset: 10, hgetall: 1, publish: 1 })
    // Per call: EXISTS (paused, flow and the ring of keys at once), RPOP, LPUSH, ZADD; per task: HGET, HSET, HDEL.
    expect(plain.lease).toEqual({ exists: 1, rpop: 1, lpush: 1, zadd: 1, hget: 10, hset: 10, hdel: 10 })
    // Per call: ZMSCORE, ZREM, DEL, two INCRBY (and EXPIREAT of a new daily key); per task: LREM.
    expect(plain.completed).toEqual({ zmscore: 1, zrem: 1, del: 1, incrby: 2, lrem: 10 })

    const keyed = await lifecycle("cost-keyed", { limitKey: "customer:1" })
    // Per task: EXISTS, HSET, ZADD (scheduled, sentinel), LPUSH (the key's list), ZADD NX (the ring);
    // the key joining the ring wakes the workers and is added to the queue's index of per-key keys
    // (SADD, for the queue's deletion) once (SADD is not counted here: the queue's registration
    // sends one too; the index is read instead).
    expect(keyed.enqueued).toEqual({ exists: 10, hset: 10, zadd: 20, lpush: 10, publish: 1 })
    expect(keyed.indexAfterEnqueue).toEqual(["l:customer:1"])
    expect(keyed.indexAfterLease).toEqual([])
    expect(plain.indexAfterEnqueue).toEqual([])
    expect(keyed.completed).toEqual(plain.completed)
    // The keyed lease. Per call: the EXISTS (paused, flow, ring), a second EXISTS (paused and ring
    // told apart), HMGET (the per-key limit), ZRANGEBYSCORE (the ready keys), RPOP of pending (its
    // turn), per key served an EXISTS of its list and a ZADD or ZREM in the ring, and the usual
    // LPUSH, ZADD; a key leaving the ring looks for its leased set and rate state (EXISTS) and,
    // with neither, leaves the index of per-key keys (SREM). Per task: RPOP of the key's list, ZSCORE
    // and ZREM in the scheduled set (3 more than a plain task), and the usual HGET, HSET, HDEL.
    expect(keyed.lease).toEqual({
      exists: 4,
      srem: 1,
      hmget: 1,
      zrangebyscore: 1,
      rpop: 11,
      zscore: 10,
      zrem: 11,
      lpush: 1,
      zadd: 1,
      hget: 10,
      hset: 10,
      hdel: 10
    })
  })
})
