/**
 * The lease for large messages (src/broker/leaseByIds.ts): dequeueLease in ids mode, SORT … BY
 * nosort GET asynq:{q}:t:*->msg and DEL in one MULTI, against the script alone. Each case arranges
 * the same tasks in two queues, leases one with each way under the same input, and compares the
 * replies and the whole of each queue's keys afterwards (names normalized).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Broker } from "../../src/broker/Broker.js"
import { type DequeueLeaseInput, type DequeueLeaseReply, dequeueLeaseScript } from "../../src/broker/dequeueLease.js"
import { canLeaseByIds, dequeueLeaseByIds, leasingListKey, mergeLeasedMessages } from "../../src/broker/leaseByIds.js"
import { runScript } from "../../src/broker/script.js"
import { Redis } from "../../src/redis/Redis.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, io, putPendingBytes, stepsTestDb, testBrokerLayer } from "../support/arrange.js"
import { testRedisUrl } from "../support/redis.js"

const c = stepsTestDb()

/** Every key of the queue with its type and content, the queue's name replaced by Q (binary values as hex). */
const dumpQueue = async (queue: string): Promise<Record<string, unknown>> => {
  const prefix = queueKeys(queue).prefix
  const keys = (await c.keys(`${prefix.replace(/[{}]/g, "\\$&")}*`)).sort()
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    const type = await c.type(key)
    const name = `${type} ${key.slice(prefix.length)}`
    if (type === "hash") {
      const h = await c.hgetallBuffer(key)
      out[name] = Object.fromEntries(Object.entries(h).map(([f, v]) => [f, v.toString("hex")]))
    } else if (type === "list") out[name] = await c.lrange(key, 0, -1)
    else if (type === "zset") out[name] = await c.call("ZRANGE", key, "0", "-1", "WITHSCORES")
    else if (type === "string") out[name] = await c.get(key)
    else out[name] = type
  }
  return out
}

/** A message of `size` bytes with every byte value in it (CR, LF, NUL, 0xff: protobuf is binary). */
const bytesOf = (size: number, seed: number): Buffer => {
  const b = Buffer.alloc(size)
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff
  return b
}

/** The same pending tasks (oldest first) in both queues. */
const arrange = async (queues: ReadonlyArray<string>, ids: ReadonlyArray<string>, size: number) => {
  for (const q of queues) for (const [i, id] of ids.entries()) await putPendingBytes(c, q, id, bytesOf(size, i))
}

const input = (queue: string, over: Partial<DequeueLeaseInput> = {}): DequeueLeaseInput => ({
  queue,
  count: 10,
  leaseExpiresAtSec: baseNowMs / 1000 + 30,
  leaseScore: `${baseNowMs / 1000 + 29}.5`,
  nowMs: baseNowMs,
  ...over
})

const plain = (r: DequeueLeaseReply) => ({
  pairs: r.pairs.map((p) => ({
    id: p.id,
    bytes: p.bytes === undefined ? undefined : Buffer.from(p.bytes).toString("hex")
  })),
  limited: r.limited
})

/** Leases `old` with the script alone and `neu` the large-message way; both replies and both queues' state afterwards. */
const both = (old: string, neu: string, over: Partial<DequeueLeaseInput> = {}, newFirst = false) =>
  Effect.gen(function* () {
    const b0 = newFirst ? yield* dequeueLeaseByIds(input(neu, over)) : undefined
    const a = yield* runScript(dequeueLeaseScript, input(old, over))
    const b = b0 ?? (yield* dequeueLeaseByIds(input(neu, over)))
    return {
      a: plain(a),
      b: plain(b),
      stateA: yield* io(() => dumpQueue(old)),
      stateB: yield* io(() => dumpQueue(neu))
    }
  })

layer(testBrokerLayer())("dequeueLease, the large-message way (real Redis)", (it) => {
  it.effect("a single node's transport sends the MULTI (the ioredis service has scriptSorted)", () =>
    Effect.map(Broker, (broker) => expect(canLeaseByIds(broker)).toBe(true))
  )

  it.effect("the same tasks, bytes, order, leases and Redis state as the script alone; no leasing list is left", () =>
    Effect.gen(function* () {
      const ids = Array.from({ length: 12 }, (_, i) => `t${i}`)
      yield* io(() => arrange(["lb1-old", "lb1-new"], ids, 100 * 1024))
      const r = yield* both("lb1-old", "lb1-new")
      expect(r.b.pairs.map((p) => p.id)).toEqual(ids.slice(0, 10))
      expect(r.b.pairs[3]!.bytes).toBe(bytesOf(100 * 1024, 3).toString("hex"))
      expect(r.b).toEqual(r.a)
      expect(r.stateB).toEqual(r.stateA)
      expect(Object.keys(r.stateB)).not.toContain("list leasing")
      expect(yield* io(() => c.exists(leasingListKey("lb1-new")))).toBe(0)
      // One task a call (RPOPLPUSH in the script) and the rest.
      const one = yield* both("lb1-old", "lb1-new", { count: 1 })
      expect(one.b.pairs.map((p) => p.id)).toEqual(["t10"])
      expect(one.b).toEqual(one.a)
      expect(one.stateB).toEqual(one.stateA)
      const empty = yield* both("lb1-old", "lb1-new")
      expect(empty.b.pairs.map((p) => p.id)).toEqual(["t11"])
      expect(empty.stateB).toEqual(empty.stateA)
      const none = yield* both("lb1-old", "lb1-new")
      expect(none.b).toEqual({ pairs: [], limited: undefined })
      expect(none.stateB).toEqual(none.stateA)
    })
  )

  it.effect(
    "a dangling id (no task hash, or a hash without msg) comes back without bytes and is taken out of active, as today",
    () =>
      Effect.gen(function* () {
        yield* io(() => arrange(["lb2-old", "lb2-new"], ["a", "b", "c", "d"], 20 * 1024))
        yield* io(async () => {
          for (const q of ["lb2-old", "lb2-new"]) {
            await c.del(queueKeys(q).task("b"))
            await c.hdel(queueKeys(q).task("c"), "msg")
          }
        })
        const r = yield* both("lb2-old", "lb2-new")
        expect(r.b.pairs.map((p) => [p.id, p.bytes === undefined])).toEqual([
          ["a", false],
          ["b", true],
          ["c", true],
          ["d", false]
        ])
        expect(r.b).toEqual(r.a)
        expect(r.stateB).toEqual(r.stateA)
        expect(r.stateB["list active"]).toEqual(["d", "a"])
      })
  )

  it.effect("a paused queue leases nothing and keeps its tasks", () =>
    Effect.gen(function* () {
      yield* io(() => arrange(["lb3-old", "lb3-new"], ["a", "b"], 10 * 1024))
      yield* io(() => Promise.all(["lb3-old", "lb3-new"].map((q) => c.set(queueKeys(q).paused, "1"))))
      const r = yield* both("lb3-old", "lb3-new")
      expect(r.b).toEqual({ pairs: [], limited: undefined })
      expect(r.a).toEqual(r.b)
      expect(r.stateB).toEqual(r.stateA)
      expect(r.stateB["list pending"]).toEqual(["b", "a"])
    })
  )

  it.effect(
    "a flow limit's rate and concurrency cap cut the lease the same way, with the same wait at the reply's end",
    () =>
      Effect.gen(function* () {
        yield* io(() => arrange(["lb4-old", "lb4-new", "lb5-old", "lb5-new"], ["a", "b", "c", "d", "e"], 10 * 1024))
        yield* io(async () => {
          for (const q of ["lb4-old", "lb4-new"]) await c.hset(queueKeys(q).flow, "interval_ms", 1000, "burst", 2)
          for (const q of ["lb5-old", "lb5-new"]) await c.hset(queueKeys(q).flow, "concurrency", 3)
        })
        const rate = yield* both("lb4-old", "lb4-new")
        expect(rate.b.pairs.map((p) => p.id)).toEqual(["a", "b"])
        expect(rate.b.limited).toEqual({ by: "rate", waitMs: 1000 })
        expect(rate.b).toEqual(rate.a)
        expect(rate.stateB).toEqual(rate.stateA)
        const cap = yield* both("lb5-old", "lb5-new")
        expect(cap.b.pairs.map((p) => p.id)).toEqual(["a", "b", "c"])
        expect(cap.b.limited).toEqual({ by: "concurrency" })
        expect(cap.b).toEqual(cap.a)
        expect(cap.stateB).toEqual(cap.stateA)
      })
  )

  it.effect("parking: a short reply parks the worker with the same token and room", () =>
    Effect.gen(function* () {
      yield* io(() => arrange(["lb6-old", "lb6-new"], ["a", "b"], 10 * 1024))
      const r = yield* both("lb6-old", "lb6-new", { park: { server: "srv-1", token: "123.25" } })
      expect(r.b.pairs.map((p) => p.id)).toEqual(["a", "b"])
      expect(r.b).toEqual(r.a)
      expect(r.stateB).toEqual(r.stateA)
      expect(r.stateB["hash parkroom"]).toEqual({ "srv-1": Buffer.from("8").toString("hex") })
    })
  )

  it.effect(
    "NOSCRIPT inside the MULTI (the script cache was flushed): sent again with EVAL, the lease happens once",
    () =>
      Effect.gen(function* () {
        yield* io(() => arrange(["lb7-old", "lb7-new"], ["a", "b", "c"], 10 * 1024))
        // Cached on this connection by now; flushed on the server.
        const first = yield* both("lb7-old", "lb7-new", { count: 1 })
        expect(first.b).toEqual(first.a)
        yield* io(() => c.script("FLUSH"))
        const again = yield* both("lb7-old", "lb7-new", { count: 2 }, true)
        expect(again.b.pairs.map((p) => p.id)).toEqual(["b", "c"])
        expect(again.b).toEqual(again.a)
        expect(again.stateB).toEqual(again.stateA)
      })
  )

  it("merges ids and messages into the script-only reply shape; a count mismatch is unexpected", () => {
    const id = Buffer.from("x")
    const msg = Buffer.from([1, 2])
    expect(mergeLeasedMessages([id, id], [msg, null])).toEqual([id, msg, id, null])
    expect(mergeLeasedMessages([id, 250], [msg])).toEqual([id, msg, 250])
    expect(mergeLeasedMessages([-1], [])).toEqual([-1])
    expect(mergeLeasedMessages([id], [])).toBeUndefined()
    expect(mergeLeasedMessages("x", [])).toBeUndefined()
  })

  it.effect(
    "Redis refusing SORT's GET (an ACL user limited to asynq:* keys): the messages of the leased tasks are read by id (same reply and state), and the connection leases through the script from then on",
    () =>
      Effect.gen(function* () {
        yield* io(() => arrange(["lb8-old", "lb8-new"], ["a", "b", "c", "d"], 10 * 1024))
        yield* io(() => c.call("ACL", "SETUSER", "lease-by-ids-limited", "on", ">pw", "~asynq:*", "+@all"))
        const limited = Layer.fresh(Broker.layer).pipe(
          Layer.provide(Redis.layer({ url: testRedisUrl(), username: "lease-by-ids-limited", password: "pw" }))
        )
        const r = yield* Effect.gen(function* () {
          const broker = yield* Broker
          const b = plain(yield* dequeueLeaseByIds(input("lb8-new", { count: 2 })))
          const largeAfter =
            (broker.messageSizes.record("lb8-new", 1, 100 * 1024), broker.messageSizes.large("lb8-new", 10))
          return { b, largeAfter }
        }).pipe(Effect.provide(limited))
        const a = plain(yield* runScript(dequeueLeaseScript, input("lb8-old", { count: 2 })))
        expect(r.b.pairs.map((p) => p.id)).toEqual(["a", "b"])
        expect(r.b).toEqual(a)
        expect(yield* io(() => dumpQueue("lb8-new"))).toEqual(yield* io(() => dumpQueue("lb8-old")))
        expect(r.largeAfter).toBe(false)
      })
  )
})
