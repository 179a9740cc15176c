import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { makeAcker } from "../../src/processor/acker.js"
import { complete } from "../../src/steps/complete.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, makeMsg, putActive, putPending, readTask, testBrokerLayer } from "../support/arrange.js"
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
  it.effect("tasks finishing together are completed in one round trip, each with its own outcome", () =>
    Effect.gen(function* () {
      const k = queueKeys("ack1")
      const msgs = Array.from({ length: 20 }, (_, i) => makeMsg("ack1", `a${i}`, i === 3 ? { retention: 600 } : {}))
      const gone = makeMsg("ack1", "gone")
      yield* io(async () => {
        for (const m of msgs) await putActive(c, m, leaseSec)
        await putPending(c, gone, baseNowMs)
      })
      const acker = makeAcker()
      // Count the round trips: the broker's scriptBatch, wrapped.
      const broker = yield* Broker
      const batches: Array<number> = []
      const counting = Broker.of({
        ...broker,
        redis: { ...broker.redis, scriptBatch: (calls, opts) => Effect.suspend(() => (batches.push(calls.length), broker.redis.scriptBatch(calls, opts))) }
      })
      const results = yield* Effect.forEach([...msgs, gone], (m) => Effect.result(acker.complete(m)), { concurrency: "unbounded" }).pipe(
        Effect.provideService(Broker, counting)
      )
      expect(batches).toEqual([21])
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
})
