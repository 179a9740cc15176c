import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { makeAcker } from "../../src/processor/acker.js"
import { makeActiveTask } from "../../src/processor/runAttempt.js"
import { settleSuccess } from "../../src/processor/settle.js"
import { RedisError } from "../../src/redis/errors.js"
import { complete, completeMany } from "../../src/steps/complete.js"
import { dequeueLeaseCall } from "../../src/steps/dequeueLease.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, makeMsg, putActive, putPending, readTask, testBrokerLayer, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())
const io = <A>(f: () => Promise<A>) => Effect.promise(f)
const leaseSec = Math.floor(Date.now() / 1000) + 60

layer(testBrokerLayer())("acker: batched completions (real Redis)", (it) => {
  it.effect(
    "tasks finishing together are completed in two batches sent at once (half each), each task with its own outcome",
    () =>
      Effect.gen(function* () {
        const k = queueKeys("ack1")
        const msgs = Array.from({ length: 20 }, (_, i) => makeMsg("ack1", `a${i}`, i === 3 ? { retention: 600 } : {}))
        const gone = makeMsg("ack1", "gone")
        yield* io(async () => {
          for (const m of msgs) await putActive(c, m, leaseSec)
          await putPending(c, gone, baseNowMs)
        })
        const acker = makeAcker()
        // Count the round trips (the broker's scriptBatch, wrapped), their sizes and how many were in flight at once.
        const broker = yield* Broker
        const batches: Array<Array<string>> = []
        const sizes: Array<number> = []
        let inFlight = 0
        let mostInFlight = 0
        const counting = Broker.of({
          ...broker,
          redis: {
            ...broker.redis,
            scriptBatch: (calls, opts) =>
              Effect.suspend(() => {
                batches.push(calls.map((x) => x.script))
                sizes.push(calls[0]!.args.length)
                mostInFlight = Math.max(mostInFlight, ++inFlight)
                return broker.redis.scriptBatch(calls, opts).pipe(Effect.ensuring(Effect.sync(() => inFlight--)))
              })
          }
        })
        const results = yield* Effect.forEach([...msgs, gone], (m) => Effect.result(acker.complete(m)), {
          concurrency: "unbounded"
        }).pipe(Effect.provideService(Broker, counting))
        // Two round trips, one script call each, both in flight together: 11 tasks, then 10.
        expect(batches).toEqual([["completeBatch"], ["completeBatch"]])
        expect(mostInFlight).toBe(2)
        expect([...sizes].sort()).toEqual([1 + 5 * 10, 1 + 5 * 11])
        results.slice(0, 20).forEach((r, i) => {
          expect(r._tag).toBe("Success")
          if (r._tag === "Success") expect(r.success.outcome).toBe(i === 3 ? "completed" : "deleted")
        })
        const last = results[20]!
        expect(last._tag).toBe("Failure")
        if (last._tag === "Failure") expect(last.failure._tag).toBe("LeaseLost")
        expect(yield* io(() => c.llen(k.active))).toBe(0)
        expect(yield* io(() => c.zcard(k.lease))).toBe(0)
        expect(yield* io(() => c.get(k.processedTotal))).toBe("20")
        expect(yield* io(() => c.zcard(k.completed))).toBe(1)
        expect((yield* io(() => readTask(c, "ack1", "gone"))).fields.state).toBe("pending")
        // Later completions start a new batch.
        const again = makeMsg("ack1", "later")
        yield* io(() => putActive(c, again, leaseSec))
        expect((yield* acker.complete(again)).outcome).toBe("deleted")
        expect(yield* io(() => c.get(k.processedTotal))).toBe("21")
      })
  )

  it.effect("complete resets the processed total to 1 at the int64 maximum, as asynq", () =>
    Effect.gen(function* () {
      const k = queueKeys("ack2")
      const msg = makeMsg("ack2", "max")
      yield* io(async () => {
        await putActive(c, msg, leaseSec)
        await c.set(k.processedTotal, "9223372036854775807")
      })
      expect((yield* complete(msg)).outcome).toBe("deleted")
      expect(yield* io(() => c.get(k.processedTotal))).toBe("1")
      const next = makeMsg("ack2", "next")
      yield* io(() => putActive(c, next, leaseSec))
      yield* complete(next)
      expect(yield* io(() => c.get(k.processedTotal))).toBe("2")
    })
  )

  it.effect(
    "completeMany: one call per queue, each task's outcome in order; counters, daily keys (with asynq's expiry) and locks as one complete per task",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const ka = queueKeys("ack3a")
        const kb = queueKeys("ack3b")
        const a = Array.from({ length: 3 }, (_, i) =>
          makeMsg("ack3a", `a${i}`, i === 1 ? { uniqueKey: `${ka.prefix}unique:a1` } : {})
        )
        const b = [makeMsg("ack3b", "b0", { retention: 60 }), makeMsg("ack3b", "b1")]
        const notActive = makeMsg("ack3b", "b-pending")
        yield* io(async () => {
          for (const m of [...a, ...b]) await putActive(c, m, leaseSec)
          await putPending(c, notActive, baseNowMs)
          await c.set(`${ka.prefix}unique:a1`, "a1")
        })
        const broker = yield* Broker
        const batches: Array<Array<string>> = []
        const counting = Broker.of({
          ...broker,
          redis: {
            ...broker.redis,
            scriptBatch: (calls, opts) =>
              Effect.suspend(() => (batches.push(calls.map((x) => x.script)), broker.redis.scriptBatch(calls, opts)))
          }
        })
        const mixed = [a[0]!, b[0]!, a[1]!, notActive, b[1]!, a[2]!]
        const { results } = yield* completeMany(mixed).pipe(Effect.provideService(Broker, counting))
        expect(batches).toEqual([["completeBatch", "completeBatch"]])
        expect(results.map((r) => (r._tag === "Success" ? r.success.outcome : r.failure._tag))).toEqual([
          "deleted",
          "completed",
          "deleted",
          "LeaseLost",
          "deleted",
          "deleted"
        ])
        const now = yield* Clock.currentTimeMillis
        const day = yield* io(() =>
          Promise.all([
            c.get(ka.processed(now)),
            c.get(kb.processed(now)),
            c.ttl(ka.processed(now)),
            c.ttl(kb.processed(now))
          ])
        )
        expect(day.slice(0, 2)).toEqual(["3", "2"])
        // asynq's daily stat keys expire 90 days after their first count
        const expected = Math.floor(now / 1000) + 90 * 24 * 3600 - Math.floor(Date.now() / 1000)
        for (const ttl of day.slice(2) as Array<number>) expect(Math.abs(ttl - expected)).toBeLessThanOrEqual(2)
        expect(yield* io(() => Promise.all([c.get(ka.processedTotal), c.get(kb.processedTotal)]))).toEqual(["3", "2"])
        expect(yield* io(() => c.exists(`${ka.prefix}unique:a1`))).toBe(0)
        expect(
          yield* io(() => Promise.all([c.llen(ka.active), c.llen(kb.active), c.zcard(ka.lease), c.zcard(kb.lease)]))
        ).toEqual([0, 0, 0, 0])
        expect(
          yield* io(() => Promise.all([c.exists(ka.task("a0")), c.exists(kb.task("b1")), c.zcard(kb.completed)]))
        ).toEqual([0, 0, 1])
        expect((yield* io(() => readTask(c, "ack3b", "b0"))).fields.state).toBe("completed")
        expect((yield* io(() => readTask(c, "ack3b", "b-pending"))).fields.state).toBe("pending")
        // A later count of the same day keeps the key's expiry (set once, when the key was created).
        yield* io(() => c.expire(ka.processed(now), 1000))
        const more = makeMsg("ack3a", "a3")
        yield* io(() => putActive(c, more, leaseSec))
        yield* completeMany([more])
        expect(yield* io(() => Promise.all([c.get(ka.processed(now)), c.ttl(ka.processed(now))]))).toEqual(["4", 1000])
      })
  )

  it.effect(
    "completeMany restarts the processed total at 1 past the int64 maximum exactly where one complete per task would",
    () =>
      Effect.gen(function* () {
        const k = queueKeys("ack4")
        const msgs = Array.from({ length: 3 }, (_, i) => makeMsg("ack4", `m${i}`))
        yield* io(async () => {
          for (const m of msgs) await putActive(c, m, leaseSec)
          await c.set(k.processedTotal, "9223372036854775806")
        })
        const { results } = yield* completeMany(msgs)
        expect(results.every((r) => r._tag === "Success")).toBe(true)
        // 9223372036854775807 (the maximum), then 1, then 2
        expect(yield* io(() => c.get(k.processedTotal))).toBe("2")
      })
  )

  it.effect(
    "completeMany takes a lease of the same queue into that queue's call (completeAndLease) and keeps one of another queue as its own call",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const k = queueKeys("ack5")
        const done = [makeMsg("ack5", "d1"), makeMsg("ack5", "d2")]
        yield* io(async () => {
          for (const m of done) await putActive(c, m, leaseSec)
          for (const id of ["p1", "p2", "p3"]) await putPending(c, makeMsg("ack5", id), baseNowMs)
          await putPending(c, makeMsg("ack5-other", "o1"), baseNowMs)
        })
        const broker = yield* Broker
        const batches: Array<Array<string>> = []
        const counting = Broker.of({
          ...broker,
          redis: {
            ...broker.redis,
            scriptBatch: (calls, opts) =>
              Effect.suspend(() => (batches.push(calls.map((x) => x.script)), broker.redis.scriptBatch(calls, opts)))
          }
        })
        const same = dequeueLeaseCall("ack5", 2, 30_000, baseNowMs)
        const other = dequeueLeaseCall("ack5-other", 5, 30_000, baseNowMs)
        const r = yield* completeMany(done, [other.call, same.call], [other.lease, same.lease]).pipe(
          Effect.provideService(Broker, counting)
        )
        expect(batches).toEqual([["completeAndLease", "dequeueLease"]])
        expect(r.results.map((x) => (x._tag === "Success" ? x.success.outcome : x.failure._tag))).toEqual([
          "deleted",
          "deleted"
        ])
        expect(r.extra).toHaveLength(2)
        const [otherReply, sameReply] = r.extra
        const leasedHere = yield* same.land(sameReply!.ok ? sameReply!.value : undefined)
        const leasedThere = yield* other.land(otherReply!.ok ? otherReply!.value : undefined)
        expect(leasedHere.tasks.map((t) => t.msg.id)).toEqual(["p1", "p2"])
        expect(leasedThere.tasks.map((t) => t.msg.id)).toEqual(["o1"])
        // The completed tasks are gone, the leased ones active under their lease, one left pending.
        expect(yield* io(() => c.lrange(k.active, 0, -1))).toEqual(["p2", "p1"])
        // Both under the riding dequeue's own lease score: just under the expiry (leaseScore), as a whole second the expiry itself.
        const leases = yield* io(() => zsetOf(c, k.lease))
        expect(leases.map(([id]) => id)).toEqual(["p1", "p2"])
        expect(leases[0]![1]).toBe(leases[1]![1])
        expect(Math.ceil(leases[0]![1])).toBe(baseNowMs / 1000 + 30)
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["p3"])
        expect(yield* io(() => Promise.all([c.exists(k.task("d1")), c.get(k.processedTotal)]))).toEqual([0, "2"])
        expect((yield* io(() => readTask(c, "ack5", "p1"))).fields).toEqual({ state: "active" })
      })
  )

  it.effect(
    "settleSuccess: a completion that fails with a Redis error is tried again while the lease holds; a lost lease is reported",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const msg = makeMsg("ack6", "s1")
        yield* io(() => putActive(c, msg, leaseSec))
        const broker = yield* Broker
        let failures = 1
        const flaky = Broker.of({
          ...broker,
          redis: {
            ...broker.redis,
            scriptBatch: (calls, opts) =>
              Effect.suspend(() =>
                failures-- > 0
                  ? Effect.succeed(
                      calls.map(() => ({
                        ok: false as const,
                        error: new RedisError({ op: "script completeBatch", message: "connection reset" })
                      }))
                    )
                  : broker.redis.scriptBatch(calls, opts)
              )
          }
        })
        const acker = makeAcker()
        const entry = makeActiveTask(msg, baseNowMs, baseNowMs + 30_000)
        const fiber = yield* settleSuccess(entry, acker).pipe(Effect.provideService(Broker, flaky), Effect.forkChild)
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(fiber)).toBe("completed")
        expect(failures).toBe(-1)
        expect(yield* io(() => c.get(queueKeys("ack6").processedTotal))).toBe("1")
        // Taken back meanwhile (pending again, as the recoverer does): the lease is lost, nothing written.
        yield* io(() => putPending(c, msg, baseNowMs))
        expect(yield* settleSuccess(makeActiveTask(msg, baseNowMs, baseNowMs + 30_000), acker)).toBe("lease-lost")
        expect(yield* io(() => c.get(queueKeys("ack6").processedTotal))).toBe("1")
      })
  )
  it.effect(
    "a task finishing right after a batch settled, while the tasks that batch's ride started wait to be sent, goes out too (no stall, each its own outcome)",
    () =>
      Effect.gen(function* () {
        const q = "ack7"
        const [m1, m2, m3] = ["l1", "l2", "l3"].map((id) => makeMsg(q, id))
        yield* io(async () => {
          for (const m of [m1!, m2!, m3!]) await putActive(c, m, leaseSec)
        })
        const now = yield* Clock.currentTimeMillis
        // The first batch carries a ride (a lease from an empty queue) whose landing starts a task that
        // finishes at once (m2), as the intake's ride does; later batches carry none.
        let rides = 0
        let m2Fiber: Fiber.Fiber<unknown, unknown> | undefined
        const acker = makeAcker(() =>
          Effect.sync(() => {
            if (rides++ > 0) return undefined
            const lease = dequeueLeaseCall("ack7-empty", 1, 30_000, now)
            return {
              call: lease.call,
              land: () =>
                Effect.forkChild(acker.complete(m2!), { startImmediately: true }).pipe(
                  Effect.tap((f) => Effect.sync(() => void (m2Fiber = f))),
                  Effect.asVoid
                )
            }
          })
        )
        expect((yield* acker.complete(m1!)).outcome).toBe("deleted")
        // Right after the settle, before the hand-over to m2 has run: m3 finishes.
        const r3 = yield* acker.complete(m3!)
        expect(r3.outcome).toBe("deleted")
        expect(m2Fiber).toBeDefined()
        expect(yield* Fiber.join(m2Fiber!)).toEqual({ outcome: "deleted" })
        expect(yield* io(() => c.llen(queueKeys(q).active))).toBe(0)
        expect(yield* io(() => c.get(queueKeys(q).processedTotal))).toBe("3")
      })
  )
})
