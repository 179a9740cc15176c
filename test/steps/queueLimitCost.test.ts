/**
 * What a flow-control limit costs in Redis, counted from the server's own command statistics
 * (INFO commandstats, on a redis-server of this file's own): an unlimited queue's dequeue runs no
 * command for it (its paused check is the one EXISTS it always sent, now naming the limit's key
 * too); a limited one adds a fixed few per call, not per task.
 */
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { setQueueLimit } from "../../src/steps/queueLimit.js"
import { baseNowMs, brokerLayerAt, makeMsg, putPending } from "../support/arrange.js"
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

/** Calls per command (lower case) since the last CONFIG RESETSTAT. */
const commandCalls = async (): Promise<Record<string, number>> => {
  const info = await c.info("commandstats")
  const out: Record<string, number> = {}
  for (const m of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2])
  return out
}

/** The commands ten dequeue calls of `count` tasks each run inside their script. */
const dequeueCommands = async (queue: string, count: number) => {
  await c.config("RESETSTAT")
  await run(
    Effect.forEach(Array.from({ length: 10 }), () => dequeueLease({ queues: [queue], count }), { discard: true })
  )
  // The data commands only (not the scripts' EVALSHA, nor a connection's HELLO, INFO, QUIT, …).
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
  return Object.fromEntries(
    Object.entries(await commandCalls()).filter(([name]) => !connection.has(name.split("|")[0]!))
  )
}

describe("flow-control cost (INFO commandstats)", () => {
  it("an unlimited queue's dequeue runs the commands it ran before the feature; a limited one adds one HMGET (and HSET, LLEN) per call", async () => {
    for (const q of ["cost-free", "cost-limited"])
      for (let i = 0; i < 50; i++) await putPending(c, makeMsg(q, `${q}-${i}`), baseNowMs)
    const free = await dequeueCommands("cost-free", 3)
    // Per call: EXISTS (paused and flow at once), RPOP, LPUSH, ZADD; per task: HGET, HSET, HDEL.
    expect(free).toEqual({ exists: 10, rpop: 10, lpush: 10, zadd: 10, hget: 30, hset: 30, hdel: 30 })

    await run(setQueueLimit("cost-limited", { rate: { limit: 1000, per: "1s" }, burst: 100, concurrency: 100 }))
    const limited = await dequeueCommands("cost-limited", 3)
    // The limit's own: EXISTS paused (a queue with a limit checks pause apart), HMGET, LLEN, and the rate's HSET.
    expect(limited).toEqual({
      exists: 20,
      hmget: 10,
      llen: 10,
      rpop: 10,
      lpush: 10,
      zadd: 10,
      hget: 30,
      hset: 40,
      hdel: 30
    })
  })
})
