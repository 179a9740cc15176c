/**
 * Per-key limits and fair tenants in the lease scripts (lua/includes/writeKeyedTask.lua,
 * lua/includes/keyLimits.lua, lua/releaseLimitKey.lua): a task with a limit key waits as an asynq
 * scheduled task under a sentinel score until its key has room; a per-key concurrency and a
 * per-key rate (GCRA) hold each key; keys are served round robin; stale ids are skipped; a key's
 * count heals itself. Time is TestClock's: the scripts take now from the caller.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { limitJson } from "../../adapters/dashboard/asynqmonJson.js"
import { releaseLimitKeyScript } from "../../src/broker/limitKeys.js"
import { runScript } from "../../src/broker/script.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { listTasks } from "../../src/inspector/listTasks.js"
import { deleteTask, runTask } from "../../src/inspector/taskActions.js"
import { completeMany } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { enqueueThrottled } from "../../src/steps/enqueueThrottled.js"
import { forward } from "../../src/steps/forward.js"
import { requeue } from "../../src/steps/requeue.js"
import { retry } from "../../src/steps/retry.js"
import { limitKeyHeader } from "../../src/steps/options.js"
import { getQueueLimit, setQueueLimit } from "../../src/steps/queueLimit.js"
import { defineTask } from "../../src/tasks/defineTask.js"
import { queueKeys } from "../../src/wire/keys.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"
import { baseNowMs, io, stepsTestDb, testBrokerLayer } from "../support/arrange.js"

const c = stepsTestDb()
const sentinel = 253402300799

const keyed = (queue: string, key: string, n: number, tag = key) =>
  Effect.forEach(Array.from({ length: n }), (_, i) =>
    enqueue("t", { i }, { queue, limitKey: key, taskId: `${tag}-${i}` })
  )

const keyOf = (m: TaskMessage) => m.headers[limitKeyHeader]
const countBy = (msgs: ReadonlyArray<TaskMessage>) => {
  const out: Record<string, number> = {}
  for (const m of msgs) out[keyOf(m) ?? "-"] = (out[keyOf(m) ?? "-"] ?? 0) + 1
  return out
}
const release = (m: TaskMessage, nowMs: number) =>
  runScript(releaseLimitKeyScript, { queue: m.queue, id: m.id, limitKey: keyOf(m)!, nowMs })

layer(testBrokerLayer())("per-key limits (real Redis)", (it) => {
  it.effect("a keyed task waits as a scheduled task (sentinel score) that no forwarder moves, shown as scheduled", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const info = yield* enqueue("t", { a: 1 }, { queue: "lk-state", limitKey: "customer:42", taskId: "k1" })
      expect(info.state).toBe("scheduled")
      const k = queueKeys("lk-state")
      expect(yield* io(() => c.hget(k.task("k1"), "state"))).toBe("scheduled")
      expect(Number(yield* io(() => c.zscore(k.scheduled, "k1")))).toBe(sentinel)
      expect(yield* io(() => c.lrange(k.limitKeyList("customer:42"), 0, -1))).toEqual(["k1"])
      // The inspector reads it as an ordinary scheduled task; its key travels in a header.
      const shown = yield* getTaskInfo("lk-state", "k1")
      expect(shown.state).toBe("scheduled")
      expect(shown.headers[limitKeyHeader]).toBe("customer:42")
      expect((yield* listTasks("lk-state", "scheduled")).map((t) => t.id)).toEqual(["k1"])
      // Our forwarder (and Go's: score <= now) never moves it.
      yield* TestClock.adjust(3_600_000)
      expect((yield* forward({ queues: ["lk-state"] })).moved).toBe(0)
      // The lease takes it.
      const got = yield* dequeueLease({ queues: ["lk-state"], count: 5 })
      expect(got.tasks.map((t) => t.msg.id)).toEqual(["k1"])
      expect(yield* io(() => c.hget(k.task("k1"), "state"))).toBe("active")
      expect(yield* io(() => c.zscore(k.scheduled, "k1"))).toBeNull()
      // The key left the ring with its last task.
      expect(yield* io(() => c.exists(k.limitKeys, k.limitKeyList("customer:42")))).toBe(0)
    })
  )

  it.effect("a per-key concurrency holds each key; a completion gives the key its place back at once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* keyed("lk-conc", "a", 5)
      yield* keyed("lk-conc", "b", 1)
      yield* setQueueLimit("lk-conc", { perKey: { concurrency: 2 } })
      expect(yield* getQueueLimit("lk-conc")).toEqual({ perKey: { concurrency: 2 } })
      const first = yield* dequeueLease({ queues: ["lk-conc"], count: 10 })
      expect(countBy(first.tasks.map((t) => t.msg))).toEqual({ a: 2, b: 1 })
      // Key a is full: nothing more, and the reply says when to look again (the recheck).
      const none = yield* dequeueLease({ queues: ["lk-conc"], count: 10 })
      expect(none.tasks).toHaveLength(0)
      expect(none.limited?.untilMs).toBe(baseNowMs + 2000)
      // One of a's tasks completes; the worker's release brings a forward now.
      const a0 = first.tasks.find((t) => keyOf(t.msg) === "a")!.msg
      yield* completeMany([a0])
      expect(yield* release(a0, baseNowMs)).toBe(true)
      const next = yield* dequeueLease({ queues: ["lk-conc"], count: 10 })
      expect(countBy(next.tasks.map((t) => t.msg))).toEqual({ a: 1 })
      // FIFO within a key.
      expect(next.tasks[0]!.msg.id).toBe("a-2")
    })
  )

  it.effect(
    "a key's count heals itself: a task that left active without a release frees its place at the recheck",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* keyed("lk-heal", "a", 3)
        yield* setQueueLimit("lk-heal", { perKey: { concurrency: 1 } })
        const first = yield* dequeueLease({ queues: ["lk-heal"], count: 5 })
        expect(first.tasks).toHaveLength(1)
        // The task ends without its worker's release (a crash after the write, a Go server, an operator).
        yield* completeMany([first.tasks[0]!.msg])
        expect((yield* dequeueLease({ queues: ["lk-heal"], count: 5 })).tasks).toHaveLength(0)
        yield* TestClock.adjust(2000)
        const healed = yield* dequeueLease({ queues: ["lk-heal"], count: 5 })
        expect(healed.tasks.map((t) => t.msg.id)).toEqual(["a-1"])
        expect(yield* io(() => c.smembers(queueKeys("lk-heal").limitKeyActive("a")))).toEqual(["a-1"])
      })
  )

  it.effect("a retry of a keyed task comes back to its key when due (held to the key's limit, first in line)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* keyed("lk-retry", "a", 3)
      yield* setQueueLimit("lk-retry", { perKey: { concurrency: 1 } })
      const first = yield* dequeueLease({ queues: ["lk-retry"], count: 5 })
      expect(first.tasks.map((t) => t.msg.id)).toEqual(["a-0"])
      yield* retry(first.tasks[0]!.msg, { retryAtMs: baseNowMs + 1000, errorMsg: "boom", isFailure: true })
      const k = queueKeys("lk-retry")
      expect(yield* io(() => c.hget(k.task("a-0"), "state"))).toBe("retry")
      // The key's place is free again (the retried task is not active): a-1 runs.
      yield* TestClock.adjust(2000)
      const second = yield* dequeueLease({ queues: ["lk-retry"], count: 5 })
      expect(second.tasks.map((t) => t.msg.id)).toEqual(["a-1"])
      // Due: forward brings a-0 back to its key, at the head of the line, waiting as scheduled.
      expect((yield* forward({ queues: ["lk-retry"] })).moved).toBe(1)
      expect(yield* io(() => c.hget(k.task("a-0"), "state"))).toBe("scheduled")
      expect(Number(yield* io(() => c.zscore(k.scheduled, "a-0")))).toBe(sentinel)
      expect(yield* io(() => c.llen(k.pending))).toBe(0)
      // Held to the key's concurrency: a-1 still runs.
      expect((yield* dequeueLease({ queues: ["lk-retry"], count: 5 })).tasks).toHaveLength(0)
      yield* completeMany([second.tasks[0]!.msg])
      yield* release(second.tasks[0]!.msg, baseNowMs + 2000)
      const third = yield* dequeueLease({ queues: ["lk-retry"], count: 5 })
      expect(third.tasks.map((t) => [t.msg.id, t.msg.retried])).toEqual([["a-0", 1]])
    })
  )

  it.effect("a keyed task given back unrun (a worker's shutdown) goes back to the head of its key's line", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* keyed("lk-requeue", "a", 3)
      const first = yield* dequeueLease({ queues: ["lk-requeue"], count: 1 })
      const msg = first.tasks[0]!.msg
      expect(msg.id).toBe("a-0")
      yield* requeue(msg, baseNowMs)
      // The same call sent again (its reply lost) finds its own move: already done.
      yield* requeue(msg, baseNowMs)
      const k = queueKeys("lk-requeue")
      expect(yield* io(() => c.hget(k.task("a-0"), "state"))).toBe("scheduled")
      expect(Number(yield* io(() => c.zscore(k.scheduled, "a-0")))).toBe(sentinel)
      expect(yield* io(() => c.llen(k.pending))).toBe(0)
      const again = yield* dequeueLease({ queues: ["lk-requeue"], count: 1 })
      expect(again.tasks.map((t) => t.msg.id)).toEqual(["a-0"])
    })
  )

  it.effect("a per-key rate (GCRA with a burst) holds each key and says when the next task is allowed", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* keyed("lk-rate", "a", 6)
      yield* keyed("lk-rate", "b", 6)
      const stored = yield* setQueueLimit("lk-rate", { perKey: { rate: { limit: 2, per: "1s" }, burst: 2 } })
      expect(stored).toEqual({ perKey: { rate: { limit: 2, perMs: 1000, intervalMs: 500, burst: 2 } } })
      const first = yield* dequeueLease({ queues: ["lk-rate"], count: 10 })
      expect(countBy(first.tasks.map((t) => t.msg))).toEqual({ a: 2, b: 2 })
      expect(first.limited?.untilMs).toBe(baseNowMs + 500)
      yield* TestClock.adjust(499)
      expect((yield* dequeueLease({ queues: ["lk-rate"], count: 10 })).tasks).toHaveLength(0)
      yield* TestClock.adjust(1)
      const onTime = yield* dequeueLease({ queues: ["lk-rate"], count: 10 })
      expect(countBy(onTime.tasks.map((t) => t.msg))).toEqual({ a: 1, b: 1 })
      // Nothing was counted as a failure: the held-back tasks are still waiting, untouched.
      const k = queueKeys("lk-rate")
      expect(yield* io(() => c.llen(k.limitKeyList("a")))).toBe(3)
      expect(yield* io(() => c.hget(k.task("a-5"), "state"))).toBe("scheduled")
    })
  )

  it.effect("stale ids (deleted, run now by an operator) are skipped; nothing runs twice", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* keyed("lk-stale", "a", 4)
      yield* deleteTask("lk-stale", "a-0")
      yield* runTask("lk-stale", "a-1")
      const got = yield* dequeueLease({ queues: ["lk-stale"], count: 10 })
      const ids = got.tasks.map((t) => t.msg.id).sort()
      // a-1 once (from pending, where "run now" put it), a-2 and a-3 from the key; a-0 never.
      expect(ids).toEqual(["a-1", "a-2", "a-3"])
      expect((yield* dequeueLease({ queues: ["lk-stale"], count: 10 })).tasks).toHaveLength(0)
      expect(yield* io(() => c.exists(queueKeys("lk-stale").limitKeys))).toBe(0)
    })
  )

  it.effect("fair tenants: a hot key with 10,000 waiting tasks delays a cold key's task by at most one round", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const items = Array.from({ length: 10_000 }, (_, i) => ({
        type: "t",
        payload: { i },
        options: { queue: "lk-fair", limitKey: "hot", taskId: `hot-${i}` }
      }))
      for (let i = 0; i < items.length; i += 1000) yield* enqueueMany(items.slice(i, i + 1000))
      // The hot key is being served...
      const warm = yield* dequeueLease({ queues: ["lk-fair"], count: 1 })
      expect(keyOf(warm.tasks[0]!.msg)).toBe("hot")
      // ...when a cold key's task arrives (in the same millisecond).
      yield* enqueue("t", {}, { queue: "lk-fair", limitKey: "cold", taskId: "cold-0" })
      let leasedBefore = 0
      for (;;) {
        const got = yield* dequeueLease({ queues: ["lk-fair"], count: 1 })
        expect(got.tasks).toHaveLength(1)
        if (got.tasks[0]!.msg.id === "cold-0") break
        leasedBefore++
      }
      expect(leasedBefore).toBe(0)
      // In a wider lease the cold key takes its turn in the first round too.
      yield* enqueue("t", {}, { queue: "lk-fair", limitKey: "cold", taskId: "cold-1" })
      yield* enqueue("t", {}, { queue: "lk-fair", taskId: "plain-0" })
      const wide = yield* dequeueLease({ queues: ["lk-fair"], count: 3 })
      expect(wide.tasks.map((t) => t.msg.id).sort()).toEqual(["cold-1", "hot-1", "plain-0"])
    })
  )

  it.effect("defineTask's limitKey function of the payload; bad keys and combinations are refused", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const Charge = defineTask("charge", Schema.Struct({ customer: Schema.String }), {
        queue: "lk-def",
        limitKey: (p) => `customer:${p.customer}`
      })
      const info = yield* enqueue(Charge, { customer: "42" }, { taskId: "c1" })
      expect(info.state).toBe("scheduled")
      expect(yield* io(() => c.lrange(queueKeys("lk-def").limitKeyList("customer:42"), 0, -1))).toEqual(["c1"])
      // The call's own key wins.
      yield* enqueue(Charge, { customer: "42" }, { taskId: "c2", limitKey: "vip" })
      expect(yield* io(() => c.lrange(queueKeys("lk-def").limitKeyList("vip"), 0, -1))).toEqual(["c2"])
      const refused = (options: object) =>
        Effect.map(
          Effect.flip(enqueue("t", {}, { queue: "lk-def", ...options })),
          (e) => (e as { message: string }).message
        )
      expect(yield* refused({ limitKey: "" })).toMatch(/limitKey must be a non-empty string/)
      expect(yield* refused({ limitKey: "k", processIn: 1000 })).toMatch(/processIn cannot be combined with limitKey/)
      expect(yield* refused({ limitKey: "k", group: "g" })).toMatch(/group cannot be combined with limitKey/)
      const throttled = yield* Effect.flip(
        enqueueThrottled("t", {}, { key: "x", window: 1000 }, { queue: "lk-def", limitKey: "k" })
      )
      expect((throttled as { message: string }).message).toMatch(/limitKey cannot be combined with throttle/)
      // The dashboard's API shows the per-key parts (snake_case, as the rest of its JSON).
      const stored = yield* setQueueLimit("lk-def", { concurrency: 9, perKey: { rate: { limit: 5, per: "1s" } } })
      expect(limitJson(stored)).toEqual({
        concurrency: 9,
        per_key: { rate: { limit: 5, per_ms: 1000, interval_ms: 200, burst: 1 } }
      })
      const bad = yield* Effect.flip(setQueueLimit("lk-def", { perKey: {} }))
      expect((bad as { message: string }).message).toMatch(/per-key limit needs a rate or a concurrency/)
    })
  )
})
