import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { complete, dequeueLease, enqueue, forward, janitor, recover, retry } from "../../src/steps/index.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, readTask, testBrokerLayer, stepsTestDb, io } from "../support/arrange.js"

const c = stepsTestDb()

/** The README's maintenance tick: each step bounded, each safe to overlap with another tick. */
const tick = (queues: ReadonlyArray<string>) =>
  Effect.all({ forward: forward({ queues }), recover: recover({ queues }), janitor: janitor({ queues }) })

layer(testBrokerLayer())("steps composed with enqueue (real Redis)", (it) => {
  it.effect("enqueue(unique, retention) -> dequeueLease -> complete releases the lock and keeps the task", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const info = yield* enqueue("email:send", { to: "bob" }, { queue: "p1", unique: 3_600_000, retention: 60_000 })
      const { tasks } = yield* dequeueLease({ queues: ["p1"] })
      expect(tasks.map((t) => t.msg.id)).toEqual([info.id])
      const uniqueKey = tasks[0]!.msg.uniqueKey
      expect(yield* io(() => c.get(uniqueKey))).toBe(info.id)
      expect(yield* complete(tasks[0]!.msg)).toEqual({ outcome: "completed" })
      expect(yield* io(() => c.exists(uniqueKey))).toBe(0)
      // the same task may be enqueued again now
      yield* enqueue("email:send", { to: "bob" }, { queue: "p1", unique: 3_600_000 })
    })
  )

  it.effect("a maintenance tick forwards, recovers and cleans up; a failed task runs again after its delay", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "p2"
      const later = yield* enqueue("report", "r", { queue: q, processIn: 10_000 })
      const keep = yield* enqueue("kept", "k", { queue: q, retention: 5_000 })
      const crash = yield* enqueue("crash", "c", { queue: q, maxRetry: 1 })

      const first = yield* dequeueLease({ queues: [q], count: 10 })
      expect(first.tasks.map((t) => t.msg.id)).toEqual([keep.id, crash.id])
      yield* complete(first.tasks[0]!.msg)
      // the "crash" worker dies holding its lease

      yield* TestClock.adjust("10 seconds")
      const t1 = yield* tick([q])
      expect(t1.forward.moved).toBe(1)
      expect(t1.janitor.deleted).toBe(1)
      expect(t1.recover).toEqual({ retried: 0, archived: 0, corrupt: [], failedQueues: [] })

      yield* TestClock.adjust("60 seconds")
      const t2 = yield* tick([q])
      expect(t2.recover.retried).toBe(1)

      const second = yield* dequeueLease({ queues: [q], count: 10 })
      expect(second.tasks.map((t) => t.msg.id)).toEqual([later.id])
      yield* retry(second.tasks[0]!.msg, { retryAtMs: baseNowMs + 80_000, errorMsg: "flaky", isFailure: true })

      yield* TestClock.adjust("1 hour")
      const t3 = yield* tick([q])
      expect(t3.forward.moved).toBe(2)
      const third = yield* dequeueLease({ queues: [q], count: 10 })
      expect(third.tasks.map((t) => [t.msg.id, t.msg.retried, t.msg.errorMsg]).sort()).toEqual(
        [
          [crash.id, 1, "asynq: task lease expired"],
          [later.id, 1, "flaky"]
        ].sort()
      )
      expect((yield* io(() => readTask(c, q, keep.id))).exists).toBe(false)
      expect(yield* io(() => c.get(queueKeys(q).failedTotal))).toBe("2")
    })
  )
})
