import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { writeResult } from "../../src/broker/writeResult.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putActive,
  putPending,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io
} from "../support/arrange.js"

const c = stepsTestDb()
const leaseSec = baseNowMs / 1000 + 30

layer(testBrokerLayer())("complete / writeResult (real Redis)", (it) => {
  it.effect("reproduces state g: a retained task is kept as completed with its result, a plain one is deleted", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* io(async () => {
        await putPending(c, makeMsg("default", "g-retained", { retention: 3600 }), baseNowMs)
        await putPending(c, makeMsg("default", "g-plain"), baseNowMs)
      })
      const { tasks } = yield* dequeueLease({ queues: ["default"], count: 2 })
      expect(tasks.map((t) => t.msg.id)).toEqual(["g-retained", "g-plain"])
      for (const t of tasks) {
        expect(
          yield* writeResult({ queue: "default", id: t.msg.id, result: new TextEncoder().encode(`ok:${t.msg.id}`) })
        ).toBe(3 + t.msg.id.length)
      }
      yield* TestClock.adjust("1 second")
      expect((yield* complete(tasks[0]!.msg)).outcome).toBe("completed")
      expect((yield* complete(tasks[1]!.msg)).outcome).toBe("deleted")

      const k = queueKeys("default")
      const nowSec = baseNowMs / 1000 + 1
      expect(yield* io(() => zsetOf(c, k.completed))).toEqual([["g-retained", nowSec + 3600]])
      const kept = yield* io(() => readTask(c, "default", "g-retained"))
      expect(kept.fields).toEqual({ result: "ok:g-retained", state: "completed" })
      expect(kept.msg!.completedAt).toBe(nowSec)
      expect(kept.msg!.retention).toBe(3600)
      expect(yield* io(() => c.exists(k.task("g-plain")))).toBe(0)
      expect(yield* io(() => c.llen(k.active))).toBe(0)
      expect(yield* io(() => c.zcard(k.lease))).toBe(0)
      expect(yield* io(() => c.get(k.processedTotal))).toBe("2")
      expect(yield* io(() => c.get(k.processed(baseNowMs + 1000)))).toBe("2")
      const ttl = yield* io(() => c.ttl(k.processed(baseNowMs + 1000)))
      // EXPIREAT now + 90 days, computed from the TestClock (2026-11-22), against the server's clock
      const expected = nowSec + 90 * 86400 - Math.floor(Date.now() / 1000)
      expect(Math.abs(ttl - expected)).toBeLessThanOrEqual(2)
      expect(yield* io(() => c.exists(k.failedTotal))).toBe(0)
    })
  )

  it.effect("releases the uniqueness lock only while it still holds this task's id", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const k = queueKeys("c2")
      const mine = makeMsg("c2", "u1", { uniqueKey: `${k.uniquePrefix}test:job:abc` })
      const stolen = makeMsg("c2", "u2", { uniqueKey: `${k.uniquePrefix}test:job:def` })
      yield* io(async () => {
        await putActive(c, mine, leaseSec)
        await putActive(c, stolen, leaseSec)
        await c.set(mine.uniqueKey, "u1", "EX", 3600)
        await c.set(stolen.uniqueKey, "someone-else", "EX", 3600)
      })
      yield* complete(mine)
      yield* complete(stolen)
      expect(yield* io(() => c.exists(mine.uniqueKey))).toBe(0)
      expect(yield* io(() => c.get(stolen.uniqueKey))).toBe("someone-else")
    })
  )

  it.effect("fails with LeaseLost, changing nothing, when the task is no longer active", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const msg = makeMsg("c3", "gone", { retention: 60 })
      yield* io(() => putPending(c, msg, baseNowMs))
      const e = yield* Effect.flip(complete(msg))
      expect(e._tag).toBe("LeaseLost")
      expect(e.message).toContain(`cannot complete task gone in queue "c3": it is no longer active under a lease`)
      const t = yield* io(() => readTask(c, "c3", "gone"))
      expect(t.fields.state).toBe("pending")
      expect(yield* io(() => c.exists(queueKeys("c3").processedTotal))).toBe(0)
      expect(yield* io(() => c.zcard(queueKeys("c3").completed))).toBe(0)
    })
  )

  it.effect("writeResult fails with TaskNotFound for a missing task and creates no stray hash", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(writeResult({ queue: "c4", id: "nope", result: new Uint8Array([1, 2]) }))
      expect(e._tag).toBe("TaskNotFound")
      expect(e.message).toContain(`no such task in queue "c4"`)
      expect(yield* io(() => c.exists(queueKeys("c4").task("nope")))).toBe(0)
    })
  )

  it.effect("writeResult stores binary bytes unchanged", () =>
    Effect.gen(function* () {
      yield* io(() => putActive(c, makeMsg("c5", "bin"), leaseSec))
      const bytes = new Uint8Array([0, 255, 10, 128])
      expect(yield* writeResult({ queue: "c5", id: "bin", result: bytes })).toBe(4)
      expect(yield* io(() => c.hgetBuffer(queueKeys("c5").task("bin"), "result"))).toEqual(Buffer.from(bytes))
    })
  )
})
