import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putPending,
  putPendingBytes,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io
} from "../support/arrange.js"

const c = stepsTestDb()

layer(testBrokerLayer())("dequeueLease (real Redis)", (it) => {
  it.effect(
    "takes queues in the given order, oldest task first, and leaves asynq's active/lease layout (state h)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* io(async () => {
          await putPending(c, makeMsg("d1-low", "l1"), baseNowMs)
          await putPending(c, makeMsg("d1-crit", "c1"), baseNowMs)
          await putPending(c, makeMsg("d1-crit", "c2"), baseNowMs)
        })
        const first = yield* dequeueLease({ queues: ["d1-crit", "d1-low"] })
        expect(first.tasks.map((t) => t.msg.id)).toEqual(["c1"])
        expect(first.tasks[0]!.leaseExpiresAtMs).toBe(baseNowMs + 30_000)
        const k = queueKeys("d1-crit")
        const t = yield* io(() => readTask(c, "d1-crit", "c1"))
        expect(t.fields).toEqual({ state: "active" })
        expect(t.msg?.type).toBe("test:job")
        expect(yield* io(() => c.lrange(k.active, 0, -1))).toEqual(["c1"])
        // The lease is scored just under its expiry second (a fraction naming this dequeue call, see
        // leaseScore): for every whole-second cutoff it compares exactly as the expiry itself.
        const leases = yield* io(() => zsetOf(c, k.lease))
        expect(leases.map(([id]) => id)).toEqual(["c1"])
        expect(Math.ceil(leases[0]![1])).toBe(baseNowMs / 1000 + 30)
        expect(leases[0]![1]).toBeGreaterThan(baseNowMs / 1000 + 29)
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["c2"])

        const rest = yield* dequeueLease({ queues: ["d1-crit", "d1-low"], count: 5, leaseMs: 60_000 })
        expect(rest.tasks.map((x) => x.msg.id)).toEqual(["c2", "l1"])
        expect(rest.tasks.every((x) => x.leaseExpiresAtMs === baseNowMs + 60_000)).toBe(true)
        expect(rest.corrupt).toEqual([])
        const empty = yield* dequeueLease({ queues: ["d1-crit", "d1-low"], count: 5 })
        expect(empty.tasks).toEqual([])
      })
  )

  it.effect("skips a paused queue and leaves its tasks pending", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* io(async () => {
        await putPending(c, makeMsg("d2-a", "a1"), baseNowMs)
        await putPending(c, makeMsg("d2-b", "b1"), baseNowMs)
        await c.set(queueKeys("d2-a").paused, String(baseNowMs / 1000))
      })
      const r = yield* dequeueLease({ queues: ["d2-a", "d2-b"], count: 2 })
      expect(r.tasks.map((t) => t.msg.id)).toEqual(["b1"])
      expect(yield* io(() => c.lrange(queueKeys("d2-a").pending, 0, -1))).toEqual(["a1"])
      expect((yield* io(() => readTask(c, "d2-a", "a1"))).fields.state).toBe("pending")
    })
  )

  it.effect("takes at most `count` tasks per call", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* io(async () => {
        for (let i = 1; i <= 5; i++) await putPending(c, makeMsg("d3", `t${i}`), baseNowMs)
      })
      const r = yield* dequeueLease({ queues: ["d3"], count: 3 })
      expect(r.tasks.map((t) => t.msg.id)).toEqual(["t1", "t2", "t3"])
      expect(yield* io(() => c.lrange(queueKeys("d3").pending, 0, -1))).toEqual(["t5", "t4"])
      expect(yield* io(() => c.zcard(queueKeys("d3").lease))).toBe(3)
    })
  )

  it.effect(
    "a batch leaves active, lease and the task hashes exactly as one-at-a-time leases would (same order, same fields)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* io(async () => {
          for (let i = 1; i <= 4; i++) {
            await putPending(c, makeMsg("d5-batch", `t${i}`), baseNowMs)
            await putPending(c, makeMsg("d5-single", `t${i}`), baseNowMs)
          }
        })
        const batch = yield* dequeueLease({ queues: ["d5-batch"], count: 3 })
        for (let i = 0; i < 3; i++) yield* dequeueLease({ queues: ["d5-single"], count: 1 })
        expect(batch.tasks.map((t) => t.msg.id)).toEqual(["t1", "t2", "t3"])
        const layout = (q: string) =>
          io(async () => ({
            active: await c.lrange(queueKeys(q).active, 0, -1),
            pending: await c.lrange(queueKeys(q).pending, 0, -1),
            // Each call scores its leases just under the expiry (leaseScore, a fraction of its own): compared
            // as whole seconds, in id order.
            lease: (await zsetOf(c, queueKeys(q).lease))
              .map(([id, score]) => [id, Math.ceil(score)])
              .sort(([x], [y]) => String(x).localeCompare(String(y))),
            fields: await Promise.all(["t1", "t2", "t3", "t4"].map(async (id) => (await readTask(c, q, id)).fields))
          }))
        const a = yield* layout("d5-batch")
        expect(a).toEqual(yield* layout("d5-single"))
        expect(a.active).toEqual(["t3", "t2", "t1"])
        expect(a.fields.slice(0, 3)).toEqual([{ state: "active" }, { state: "active" }, { state: "active" }])
        expect(a.fields[3]!.state).toBe("pending")
      })
  )

  it.effect("archives a task whose msg is corrupt with a clear error, reports it, and still hands out the others", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const bad = Buffer.from([0x0a, 0xff, 0xff, 0xff])
      yield* io(async () => {
        await putPending(c, makeMsg("d4", "good1"), baseNowMs)
        await putPendingBytes(c, "d4", "bad", bad)
        await putPending(c, makeMsg("d4", "good2"), baseNowMs)
        await putPending(c, makeMsg("d4", "other-id"), baseNowMs)
        // a hash whose msg names another task id
        await c.hset(
          queueKeys("d4").task("other-id"),
          "msg",
          Buffer.from((await c.hgetBuffer(queueKeys("d4").task("good1"), "msg")) as Buffer)
        )
        await c.lpush(queueKeys("d4").pending, "dangling")
      })
      const r = yield* dequeueLease({ queues: ["d4"], count: 10 })
      expect(r.tasks.map((t) => t.msg.id)).toEqual(["good1", "good2"])
      expect(r.corrupt.map((x) => [x.id, x.outcome])).toEqual([
        ["bad", "archived"],
        ["other-id", "archived"],
        ["dangling", "dropped"]
      ])
      for (const x of r.corrupt) expect(x.error.startsWith("asynq: task message is corrupt: ")).toBe(true)
      expect(r.corrupt[0]!.error).toContain("asynq:{d4}:t:bad")
      expect(r.corrupt[1]!.error).toContain(`has id "good1", not "other-id"`)
      const k = queueKeys("d4")
      expect((yield* io(() => zsetOf(c, k.archived))).map(([id]) => id).sort()).toEqual(["bad", "other-id"])
      const archived = yield* io(() => c.hgetallBuffer(k.task("bad")))
      expect(archived.msg).toEqual(bad)
      expect(archived.state!.toString()).toBe("archived")
      expect(archived.error!.toString()).toBe(r.corrupt[0]!.error)
      expect((yield* io(() => c.lrange(k.active, 0, -1))).sort()).toEqual(["good1", "good2"])
      expect((yield* io(() => zsetOf(c, k.lease))).map(([id]) => id).sort()).toEqual(["good1", "good2"])
      expect(yield* io(() => c.exists(k.task("dangling")))).toBe(0)
    })
  )

  it.effect("rejects a count below 1 and a lease under a second with InvalidArgument", () =>
    Effect.gen(function* () {
      const e1 = yield* Effect.flip(dequeueLease({ queues: ["d5"], count: 0 }))
      expect(e1._tag).toBe("InvalidArgument")
      expect(e1.message).toBe("count must be a whole number >= 1, got 0")
      const e2 = yield* Effect.flip(dequeueLease({ queues: ["d5"], leaseMs: 10 }))
      expect(e2._tag === "InvalidArgument" && e2.field).toBe("leaseMs")
    })
  )
})
