/**
 * Which way the worker's lease takes (src/broker/messageSizes.ts): a queue whose recent messages are
 * large is leased with SORT in the lease's MULTI (src/broker/leaseByIds.ts), any other with the
 * script alone. The Broker here is the usual one over a real Redis, its `scriptSorted` counted.
 */
import { expect, layer } from "@effect/vitest"
import { describe, it } from "vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Broker } from "../../src/broker/Broker.js"
import { KnownQueues } from "../../src/broker/knownQueues.js"
import { coldLeaseCount, largeLeaseBytes, largeMessageBytes, MessageSizes } from "../../src/broker/messageSizes.js"
import { RedisService } from "../../src/redis/RedisService.js"
import { dequeueLease, leaseFrom } from "../../src/steps/dequeueLease.js"
import { baseNowMs, io, makeMsg, putPending, stepsTestDb } from "../support/arrange.js"
import { testRedisLayer } from "../support/redis.js"

const c = stepsTestDb()

/** Queues whose lease went the MULTI/SORT way, one entry per call. */
const sortedCalls: Array<string> = []
/** How many tasks each script-only dequeueLease call asked for (its ARGV[2]). */
const scriptOnlyCounts: Array<number> = []

const countingBroker = Layer.effect(
  Broker,
  Effect.map(RedisService, (redis) => {
    const sorted = redis.scriptSorted
    expect(sorted).toBeDefined()
    return {
      redis: {
        ...redis,
        scriptSorted: (name, keys, args, list, get) => {
          sortedCalls.push(list)
          return sorted!(name, keys, args, list, get)
        },
        scriptBuffer: (name, keys, args) => {
          if (name === "dequeueLease") scriptOnlyCounts.push(Number(args[1]))
          return redis.scriptBuffer(name, keys, args)
        }
      } satisfies typeof redis,
      knownQueues: new KnownQueues(),
      messageSizes: new MessageSizes()
    }
  })
).pipe(Layer.provide(testRedisLayer()))

const putTasks = (queue: string, n: number, payloadBytes: number, from = 0) =>
  io(async () => {
    for (let i = from; i < from + n; i++)
      await putPending(c, makeMsg(queue, `t${i}`, { payload: new Uint8Array(payloadBytes).fill(120) }), baseNowMs)
  })

describe("MessageSizes", () => {
  it("is large from an 8 KiB average with at least 64 KiB expected in the call, and follows the queue's recent messages", () => {
    const s = new MessageSizes()
    expect(s.large("q", 100)).toBe(false) // nothing seen yet
    s.record("q", 10, 10 * 100 * 1024)
    expect(s.large("q", 1)).toBe(true)
    s.record("r", 10, 10 * 10 * 1024)
    expect(s.large("r", 10)).toBe(true)
    expect(s.large("r", 1)).toBe(false) // 10 KB in one task's call: the MULTI costs more than it saves
    s.record("s", 100, 100 * 1024)
    expect(s.large("s", 1000)).toBe(false) // 1 KB messages, however many
    s.record("q", 0, 0) // an empty lease tells nothing
    expect(s.large("q", 1)).toBe(true)
    for (let i = 0; i < 12; i++) s.record("q", 10, 10 * 200)
    expect(s.large("q", 100)).toBe(false) // small again
    expect(largeMessageBytes * 8).toBe(largeLeaseBytes)
  })

  it("a fetch (or a ride) asks a queue nothing is known of for coldLeaseCount tasks at most, then for all it wants", () => {
    const s = new MessageSizes()
    expect(s.fetchCount("q", 100)).toBe(coldLeaseCount)
    expect(s.fetchCount("q", 3)).toBe(3)
    s.record("q", 0, 0) // an empty lease tells nothing
    expect(s.fetchCount("q", 100)).toBe(coldLeaseCount)
    s.record("q", 2, 200)
    expect(s.fetchCount("q", 100)).toBe(100)
    expect(s.fetchCount("other", 100)).toBe(coldLeaseCount)
  })
})

layer(countingBroker)("the worker's lease picks its way by message size (real Redis)", (it) => {
  it.effect(
    "small messages: the script alone, always; large ones: the MULTI from the second lease on, same tasks in order",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* putTasks("ll-small", 6, 1024)
        yield* putTasks("ll-large", 6, 100 * 1024)
        for (let i = 0; i < 3; i++) {
          const got = yield* dequeueLease({ queues: ["ll-small"], count: 2 })
          expect(got.tasks.map((t) => t.msg.id)).toEqual([`t${2 * i}`, `t${2 * i + 1}`])
        }
        expect(sortedCalls).toEqual([])
        const first = yield* dequeueLease({ queues: ["ll-large"], count: 2 })
        expect(first.tasks.map((t) => t.msg.id)).toEqual(["t0", "t1"])
        expect(sortedCalls).toEqual([]) // nothing known of the queue yet
        const second = yield* dequeueLease({ queues: ["ll-large"], count: 3 })
        expect(second.tasks.map((t) => t.msg.id)).toEqual(["t2", "t3", "t4"])
        expect(second.tasks[0]!.msg.payload?.length).toBe(100 * 1024)
        expect(second.tasks[0]!.leaseExpiresAtMs).toBe(baseNowMs + 30_000)
        expect(sortedCalls).toEqual(["asynq:{ll-large}:leasing"])
        const rest = yield* dequeueLease({ queues: ["ll-small", "ll-large"], count: 5 })
        expect(rest.tasks.map((t) => `${t.msg.queue}/${t.msg.id}`)).toEqual(["ll-large/t5"])
        expect(sortedCalls).toEqual(["asynq:{ll-large}:leasing", "asynq:{ll-large}:leasing"])
        expect(yield* io(() => c.lrange("asynq:{ll-large}:active", 0, -1))).toEqual([
          "t5",
          "t4",
          "t3",
          "t2",
          "t1",
          "t0"
        ])
        expect(yield* io(() => c.exists("asynq:{ll-large}:leasing"))).toBe(0)
      })
  )

  it.effect(
    "a corrupt message and a dangling id found the MULTI way are reported as the script-only way reports them",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* putTasks("ll-bad", 4, 100 * 1024)
        yield* dequeueLease({ queues: ["ll-bad"], count: 1 }) // learns the size
        sortedCalls.length = 0
        yield* io(async () => {
          await c.del("asynq:{ll-bad}:t:t2")
          await c.hset("asynq:{ll-bad}:t:t3", "msg", Buffer.from([0xff, 0xff, 0xff]))
        })
        const got = yield* dequeueLease({ queues: ["ll-bad"], count: 3 })
        expect(sortedCalls).toEqual(["asynq:{ll-bad}:leasing"])
        expect(got.tasks.map((t) => t.msg.id)).toEqual(["t1"])
        expect(got.corrupt.map((x) => [x.id, x.outcome])).toEqual([
          ["t2", "dropped"],
          ["t3", "archived"]
        ])
      })
  )

  it.effect(
    "a worker's fetch on a connection that knows nothing of the queue looks at a few tasks through the script, then leases the rest of what it wants the MULTI way",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* putTasks("ll-cold", 30, 100 * 1024)
        sortedCalls.length = 0
        scriptOnlyCounts.length = 0
        const got = yield* leaseFrom(["ll-cold"], 20, 30_000, { firstLook: true })
        expect(got.tasks.map((t) => t.msg.id)).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`))
        expect(got.tasks[19]!.msg.payload?.length).toBe(100 * 1024)
        // one look at coldLeaseCount tasks (their messages copied through Lua), the other 12 with SORT
        expect(scriptOnlyCounts).toEqual([coldLeaseCount])
        expect(sortedCalls).toEqual(["asynq:{ll-cold}:leasing"])
        expect(yield* io(() => c.llen("asynq:{ll-cold}:active"))).toBe(20)
        expect(yield* io(() => c.llen("asynq:{ll-cold}:pending"))).toBe(10)
        // small messages: the look, then the rest through the script too; a short look ends the visit
        yield* putTasks("ll-cold-small", 12, 100)
        const small = yield* leaseFrom(["ll-cold-small"], 20, 30_000, { firstLook: true })
        expect(small.tasks.length).toBe(12)
        expect(scriptOnlyCounts).toEqual([coldLeaseCount, coldLeaseCount, 20 - coldLeaseCount])
        expect(sortedCalls).toEqual(["asynq:{ll-cold}:leasing"])
        // the dequeueLease step asks for its count at once, known sizes or not
        yield* putTasks("ll-cold-step", 12, 100 * 1024)
        const step = yield* dequeueLease({ queues: ["ll-cold-step"], count: 10 })
        expect(step.tasks.length).toBe(10)
        expect(scriptOnlyCounts.slice(3)).toEqual([10])
      })
  )
})
