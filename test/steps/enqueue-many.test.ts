import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { describe, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { luaScript } from "../../src/redis/scripts.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"
import { startRedisServer } from "../support/redis-server.js"

const c = stepsTestDb()

/** Counts the socket writes (round trips) the broker's connection makes while `eff` runs. */
const countWrites = <A, E, R>(eff: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const { redis } = yield* Broker
    const stream = (redis.client as IORedis).stream
    const original = stream.write
    let writes = 0
    let sent = ""
    stream.write = function (this: typeof stream, ...args: Parameters<typeof original>) {
      writes++
      const chunk = args[0]
      sent += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("latin1")
      return original.apply(this, args)
    } as typeof original
    const a = yield* eff.pipe(Effect.ensuring(Effect.sync(() => (stream.write = original))))
    return { result: a, writes, sent }
  })

const tag = (r: Result.Result<unknown, { readonly _tag: string }>) => (Result.isSuccess(r) ? "ok" : r.failure._tag)

layer(testBrokerLayer())("enqueueMany (real Redis)", (it) => {
  it.effect("mixed batch: per-item results in input order; failures do not stop the others; one round trip", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      // Load every script first (a fresh server answers NOSCRIPT once, which costs a second trip).
      yield* enqueueMany([
        { type: "w", options: { queue: "mbw" } },
        { type: "w", options: { queue: "mbw" } }, // two pending tasks of one queue: enqueueBatch
        { type: "w", options: { queue: "mbw", processIn: 1000 } },
        { type: "w", options: { queue: "mbw", group: "w" } }
      ])
      yield* enqueue("t", "existing", { queue: "mb1", taskId: "taken" }) // queue mb1 now known
      const { result, writes } = yield* countWrites(
        enqueueMany([
          { type: "a", payload: { n: 1 }, options: { queue: "mb1", taskId: "p1" } },
          { type: "a", payload: { n: 2 }, options: { queue: "mb2", processIn: 60_000, taskId: "s1" } },
          { type: "a", payload: { n: 3 }, options: { queue: "mb1", group: "g", taskId: "g1" } },
          { type: "a", payload: 1, options: { queue: "mb1", maxRetry: -1 } },
          { type: "u", payload: "same", options: { queue: "mb2", unique: 60_000, taskId: "u1" } },
          { type: "u", payload: "same", options: { queue: "mb2", unique: 60_000, taskId: "u2" } },
          { type: "a", payload: null, options: { queue: "mb1", taskId: "taken" } },
          { type: "a", payload: null, options: { queue: "mb3", taskId: "twice" } },
          { type: "a", payload: "other", options: { queue: "mb3", taskId: "twice" } },
          { type: "", payload: null },
          // Exactly the first "twice" message again: the same write, a success with no second task.
          { type: "a", payload: null, options: { queue: "mb3", taskId: "twice" } }
        ])
      )
      expect(writes).toBe(1)
      expect(result.map(tag)).toEqual([
        "ok",
        "ok",
        "ok",
        "InvalidArgument",
        "ok",
        "DuplicateTask",
        "TaskIdConflict",
        "ok",
        "TaskIdConflict",
        "InvalidArgument",
        "ok"
      ])
      const ok = result.flatMap((r) => (Result.isSuccess(r) ? [r.success] : []))
      expect(ok.map((i) => [i.id, i.queue, i.state])).toEqual([
        ["p1", "mb1", "pending"],
        ["s1", "mb2", "scheduled"],
        ["g1", "mb1", "aggregating"],
        ["u1", "mb2", "pending"],
        ["twice", "mb3", "pending"],
        ["twice", "mb3", "pending"]
      ])
      expect(yield* io(() => c.lrange(queueKeys("mb3").pending, 0, -1))).toEqual(["twice"])
      expect(ok[1]!.nextProcessAt).toEqual(new Date(baseNowMs + 60_000))
      expect(yield* io(() => c.lrange(queueKeys("mb1").pending, 0, -1))).toEqual(["p1", "taken"])
      expect(yield* io(() => zsetOf(c, queueKeys("mb2").scheduled))).toEqual([["s1", nowSec + 60]])
      expect(yield* io(() => zsetOf(c, queueKeys("mb1").group("g")))).toEqual([["g1", nowSec]])
      expect(yield* io(() => c.lrange(queueKeys("mb2").pending, 0, -1))).toEqual(["u1"])
      expect((yield* io(() => readTask(c, "mb1", "taken"))).msg!.type).toBe("t")
      expect((yield* io(() => c.smembers("asynq:queues"))).sort()).toEqual(["mb1", "mb2", "mb3", "mbw"])
      const broker = yield* Broker
      expect(["mb1", "mb2", "mb3"].every((q) => broker.knownQueues.has(q, baseNowMs))).toBe(true)
    })
  )

  it.effect("one queue's pending batch with locks here and there: each lock is its own task's, with its own TTL", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "mbl"
      const result = yield* enqueueMany([
        { type: "a", payload: "p0", options: { queue: q, taskId: "l0" } },
        { type: "u", payload: "A", options: { queue: q, unique: 60_000, taskId: "l1" } },
        { type: "a", payload: "p2", options: { queue: q, taskId: "l2" } },
        { type: "u", payload: "B", options: { queue: q, unique: 120_000, taskId: "l3" } },
        { type: "u", payload: "A", options: { queue: q, unique: 60_000, taskId: "l4" } },
        { type: "a", payload: "p5", options: { queue: q, taskId: "l5" } },
        { type: "u", payload: "C", options: { queue: q, unique: 30_000, taskId: "l6" } }
      ])
      expect(result.map(tag)).toEqual(["ok", "ok", "ok", "ok", "DuplicateTask", "ok", "ok"])
      expect(yield* io(() => c.lrange(queueKeys(q).pending, 0, -1))).toEqual(["l6", "l5", "l3", "l2", "l1", "l0"])
      const prefix = queueKeys(q).uniquePrefix
      const locks = (yield* io(() => c.keys(`${prefix}*`))).sort()
      const holders = yield* io(() =>
        Promise.all(locks.map(async (k) => [(await c.get(k))!, await c.pttl(k)] as const))
      )
      expect(holders.map(([id]) => id).sort()).toEqual(["l1", "l3", "l6"])
      const ttl = Object.fromEntries(holders)
      expect(ttl["l1"]).toBeGreaterThan(50_000)
      expect(ttl["l1"]).toBeLessThanOrEqual(60_000)
      expect(ttl["l3"]).toBeGreaterThan(110_000)
      expect(ttl["l6"]).toBeLessThanOrEqual(30_000)
      expect((yield* io(() => readTask(c, q, "l2"))).msg!.uniqueKey).toBe("")
    })
  )

  it.effect(
    "2,500 pending tasks of one queue: three enqueueBatch calls in one round trip, every task in input order",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "lq2500"
        yield* enqueue("t", "first", { queue: q, taskId: "first" }) // queue known, script loaded
        const items = Array.from({ length: 2_500 }, (_, i) => ({
          type: "b",
          payload: { i },
          options: { queue: q, taskId: `b${i}` }
        }))
        const { result, writes } = yield* countWrites(enqueueMany(items))
        expect(writes).toBe(1)
        expect(result.every(Result.isSuccess)).toBe(true)
        const pending = yield* io(() => c.lrange(queueKeys(q).pending, 0, -1))
        expect(pending).toEqual([...items.map((it) => it.options.taskId).reverse(), "first"])
      })
  )

  it.effect(
    "40 pending tasks of 100 KB: enqueueBatch calls of at most 1 MiB of messages (four), still one round trip, every task whole and in order",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "lq100k"
        yield* enqueueMany([
          { type: "b", options: { queue: q, taskId: "first" } },
          { type: "b", options: { queue: q, taskId: "second" } }
        ]) // queue known, script loaded
        const body = "x".repeat(100 * 1024)
        const items = Array.from({ length: 40 }, (_, i) => ({
          type: "b",
          payload: { i, body },
          options: { queue: q, taskId: `big${i}` }
        }))
        const sha = luaScript("enqueueBatch").sha
        const { result, writes, sent } = yield* countWrites(enqueueMany(items))
        expect(writes).toBe(1)
        // Each message is a little over 100 KB: ten fit in 1 MiB, so four calls of ten.
        expect(sent.split(sha).length - 1).toBe(4)
        expect(result.every(Result.isSuccess)).toBe(true)
        const pending = yield* io(() => c.lrange(queueKeys(q).pending, 0, -1))
        expect(pending).toEqual([...items.map((it) => it.options.taskId).reverse(), "second", "first"])
        const last = yield* io(() => readTask(c, q, "big39"))
        expect(JSON.parse(new TextDecoder().decode(last.msg!.payload))).toEqual({ i: 39, body })
      })
  )

  it.effect("a batch of only invalid items sends nothing; an empty batch returns []", () =>
    Effect.gen(function* () {
      const { result, writes } = yield* countWrites(enqueueMany([{ type: " " }, { type: "x", options: { queue: "" } }]))
      expect(writes).toBe(0)
      expect(result.map(tag)).toEqual(["InvalidArgument", "InvalidArgument"])
      expect(yield* enqueueMany([])).toEqual([])
    })
  )

  it.effect("out-of-bounds options and lone surrogates fail their own item only; nothing is written for them", () =>
    Effect.gen(function* () {
      const result = yield* enqueueMany([
        { type: "a", options: { queue: "mbb", taskId: "good1" } },
        { type: "a", options: { queue: "mbb", timeout: 1e300 } },
        { type: "a", options: { queue: "mbb", processAt: 1e300 } },
        { type: "a", options: { queue: "mbb", unique: 1e300 } },
        { type: "a", options: { queue: "mbb\uD800" } },
        { type: "a\uDC00", options: { queue: "mbb" } },
        { type: "a", options: { queue: "mbb", taskId: "good2" } }
      ])
      expect(
        result.map((r) =>
          Result.isSuccess(r) ? "ok" : `${r.failure._tag}(${(r.failure as { field?: string }).field})`
        )
      ).toEqual([
        "ok",
        "InvalidArgument(timeout)",
        "InvalidArgument(processAt)",
        "InvalidArgument(unique)",
        "InvalidArgument(queue)",
        "InvalidArgument(type)",
        "ok"
      ])
      expect(yield* io(() => c.lrange(queueKeys("mbb").pending, 0, -1))).toEqual(["good2", "good1"]) // LPUSH: newest first
      expect((yield* io(() => c.keys("asynq:{mbb*"))).sort()).toEqual([
        "asynq:{mbb}:pending",
        "asynq:{mbb}:t:good1",
        "asynq:{mbb}:t:good2"
      ])
      expect((yield* io(() => c.smembers("asynq:queues"))).filter((q) => q.startsWith("mbb"))).toEqual(["mbb"])
    })
  )

  it.effect("a large batch across queues still goes out in one round trip", () =>
    Effect.gen(function* () {
      const items = Array.from({ length: 500 }, (_, i) => ({
        type: "bulk",
        payload: { i },
        options: { queue: `bulk${i % 5}` }
      }))
      const { result, writes } = yield* countWrites(enqueueMany(items))
      expect(writes).toBe(1)
      expect(result.every(Result.isSuccess)).toBe(true)
      for (let q = 0; q < 5; q++) expect(yield* io(() => c.llen(queueKeys(`bulk${q}`).pending))).toBe(100)
    })
  )
})

describe("enqueueMany when Redis goes away", () => {
  it("every item of the failed round trip gets a RedisError; the effect itself does not fail", async () => {
    const server = await startRedisServer()
    const brokerLayer = Broker.layer.pipe(
      Layer.provide(Redis.layer({ url: server.url, maxRetriesPerRequest: 1, connectTimeoutMs: 1000 }))
    )
    try {
      const results = await Effect.runPromise(
        Effect.gen(function* () {
          yield* enqueue("warm", undefined) // connect, load scripts
          yield* Effect.promise(() => server.stop())
          return yield* enqueueMany([{ type: "a" }, { type: "b", options: { queue: "other" } }, { type: "" }])
        }).pipe(Effect.provide(brokerLayer))
      )
      expect(results.map(tag)).toEqual(["RedisError", "RedisError", "InvalidArgument"])
    } finally {
      await server.stop()
    }
  })
})
