/**
 * Enqueue-side modes (lua/enqueueThrottled.lua, lua/enqueueDebounced.lua): throttle lets one task
 * per key per window through; debounce makes a burst of enqueues of one key run once, with the
 * last payload, a window after the burst's last enqueue. The tasks are ordinary asynq tasks (the
 * layout any asynq server reads). Windows are judged by the caller's clock: TestClock here.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueueDebounced } from "../../src/steps/enqueueDebounced.js"
import { enqueueThrottled } from "../../src/steps/enqueueThrottled.js"
import { forward } from "../../src/steps/forward.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, io, stepsTestDb, testBrokerLayer, zsetOf } from "../support/arrange.js"

const c = stepsTestDb()

layer(testBrokerLayer())("enqueue modes (real Redis)", (it) => {
  it.effect(
    "throttle: the first enqueue of a key in its window is a pending task; the others in the window write nothing and name it",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const k = queueKeys("em-throttle")
        const first = yield* enqueueThrottled(
          "t:sync",
          { n: 0 },
          { key: "user:1", window: 1000 },
          { queue: "em-throttle" }
        )
        if (first.throttled) throw new Error("the first enqueue was throttled")
        expect(first.info.state).toBe("pending")
        // A task of asynq's layout: state pending, msg, pending_since.
        expect(Object.keys(yield* io(() => c.hgetall(k.task(first.info.id)))).sort()).toEqual([
          "msg",
          "pending_since",
          "state"
        ])
        expect(yield* io(() => c.sismember("asynq:queues", "em-throttle"))).toBe(1)
        for (let i = 1; i <= 5; i++) {
          yield* TestClock.adjust(150)
          const again = yield* enqueueThrottled(
            "t:sync",
            { n: i },
            { key: "user:1", window: 1000 },
            { queue: "em-throttle" }
          )
          expect(again).toEqual({ throttled: true, windowTaskId: first.info.id })
        }
        // Another key has its own window.
        const other = yield* enqueueThrottled(
          "t:sync",
          { n: 9 },
          { key: "user:2", window: 1000 },
          { queue: "em-throttle" }
        )
        expect(other.throttled).toBe(false)
        expect(yield* io(() => c.llen(k.pending))).toBe(2)
        // The window ends 1000 ms after the first task, whether or not it ran: the next one goes through.
        yield* TestClock.setTime(baseNowMs + 1000)
        const next = yield* enqueueThrottled(
          "t:sync",
          { n: 10 },
          { key: "user:1", window: 1000 },
          { queue: "em-throttle" }
        )
        expect(next.throttled).toBe(false)
        expect(yield* io(() => c.llen(k.pending))).toBe(3)
      })
  )

  it.effect(
    "debounce: 1,000 enqueues of one id within the window give one scheduled task, with the last payload, run once after quiet",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const k = queueKeys("em-debounce")
        let last = undefined as undefined | { readonly id: string }
        let replacedCount = 0
        for (let i = 0; i < 1000; i++) {
          if (i % 100 === 0) yield* TestClock.adjust(10)
          const r = yield* enqueueDebounced(
            "t:reindex",
            { n: i },
            { key: "doc:7", window: 5000 },
            { queue: "em-debounce" }
          )
          if (r.replaced) replacedCount++
          last = r.info
        }
        expect(replacedCount).toBe(999)
        // The last enqueue came at +100 ms (ten steps of 10 ms).
        const quietFrom = baseNowMs + 100
        const scheduled = yield* io(() => zsetOf(c, k.scheduled))
        expect(scheduled.map(([id]) => id)).toEqual([last!.id])
        // Only the last task's hash is left (asynq's layout: msg and state scheduled).
        expect(yield* io(() => c.keys(`${k.taskPrefix}*`))).toEqual([k.task(last!.id)])
        expect(yield* io(() => c.hget(k.task(last!.id), "state"))).toBe("scheduled")
        // Due a window after the last enqueue, not before.
        yield* TestClock.setTime(quietFrom + 5000 - 1)
        yield* forward({ queues: ["em-debounce"] })
        expect(yield* io(() => c.llen(k.pending))).toBe(0)
        yield* TestClock.setTime(quietFrom + 5000)
        yield* forward({ queues: ["em-debounce"] })
        const run = yield* dequeueLease({ queues: ["em-debounce"], count: 10 })
        expect(run.tasks).toHaveLength(1)
        expect(JSON.parse(new TextDecoder().decode(run.tasks[0]!.msg.payload))).toEqual({ n: 999 })
        // Once the task has left the scheduled set, the next enqueue schedules a new one and replaces nothing.
        const after = yield* enqueueDebounced(
          "t:reindex",
          { n: 1000 },
          { key: "doc:7", window: 5000 },
          { queue: "em-debounce" }
        )
        expect(after.replaced).toBe(false)
        expect(yield* io(() => c.hget(k.task(run.tasks[0]!.msg.id), "state"))).toBe("active")
        expect(yield* io(() => c.zcard(k.scheduled))).toBe(1)
      })
  )

  it.effect("options that set the task's timing, a bad key or a bad window are refused, and nothing is written", () =>
    Effect.gen(function* () {
      const refused = (eff: Effect.Effect<unknown, { readonly field: string } | { readonly _tag: string }, never>) =>
        Effect.map(Effect.flip(eff), (e) => ("field" in e ? e.field : e._tag))
      const q = { queue: "em-bad" }
      expect(
        yield* refused(enqueueThrottled("t", 1, { key: "k", window: 1000 }, { ...q, processIn: 5000 }) as never)
      ).toBe("processIn")
      expect(
        yield* refused(enqueueThrottled("t", 1, { key: "k", window: 1000 }, { ...q, unique: 5000 }) as never)
      ).toBe("unique")
      expect(yield* refused(enqueueThrottled("t", 1, { key: "", window: 1000 }, q) as never)).toBe("throttle.key")
      expect(yield* refused(enqueueDebounced("t", 1, { key: "k", window: 0 }, q) as never)).toBe("debounce.window")
      expect(yield* refused(enqueueDebounced("t", 1, { key: "k", window: 1000 }, { ...q, group: "g" }) as never)).toBe(
        "group"
      )
      expect(
        yield* refused(enqueueDebounced("t", 1, { key: "k", window: 1000 }, { ...q, taskId: "fixed" }) as never)
      ).toBe("taskId")
      expect(yield* io(() => c.keys("asynq:{em-bad}:*"))).toEqual([])
    })
  )
})
