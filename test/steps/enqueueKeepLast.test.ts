/**
 * Keep-last-while-active at enqueue (lua/enqueueKeepLast.lua, lua/keepLastRelease.lua): per key, a
 * task is enqueued as usual when none of the key's tasks is unfinished; otherwise it waits (an
 * ordinary scheduled task, due at its latest start) and replaces the key's one waiting task. The
 * release makes the waiting task pending when the current one has finished. Time: TestClock.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { keepLastHeader, keepLastReleaseScript } from "../../src/broker/enqueueKeepLast.js"
import { runScript } from "../../src/broker/script.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueueKeepLast } from "../../src/steps/enqueueKeepLast.js"
import { forward } from "../../src/steps/forward.js"
import { recover } from "../../src/steps/recover.js"
import { archiveTask, deleteTask } from "../../src/inspector/taskActions.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, io, stepsTestDb, testBrokerLayer, zsetOf } from "../support/arrange.js"

const c = stepsTestDb()
const payloadOf = (bytes: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(bytes))

layer(testBrokerLayer())("keep-last-while-active (real Redis)", (it) => {
  it.effect(
    "none unfinished: pending; while the current one is unfinished, one task waits (scheduled) and each enqueue replaces it; the release runs the last",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "kl"
        const k = queueKeys(q)
        const first = yield* enqueueKeepLast("kl:sync", { n: 0 }, { key: "user:1" }, { queue: q })
        expect(first).toMatchObject({ waiting: false, replaced: false, info: { state: "pending" } })
        expect(first.info.headers[keepLastHeader]).toBe("user:1")
        expect(yield* io(() => c.hgetall(k.keepLast("user:1")))).toEqual({ current: first.info.id })
        // The current task is pending (not started): the next enqueue still waits behind it.
        const second = yield* enqueueKeepLast("kl:sync", { n: 1 }, { key: "user:1", maxWait: 60_000 }, { queue: q })
        expect(second).toMatchObject({ waiting: true, replaced: false, info: { state: "scheduled" } })
        const leased = yield* dequeueLease({ queues: [q], count: 10 })
        expect(leased.tasks.map((t) => t.msg.id)).toEqual([first.info.id])
        let last = second.info
        for (let i = 2; i <= 50; i++) {
          yield* TestClock.adjust(10)
          const r = yield* enqueueKeepLast("kl:sync", { n: i }, { key: "user:1", maxWait: 60_000 }, { queue: q })
          expect(r).toMatchObject({ waiting: true, replaced: true })
          last = r.info
        }
        // One waiting task, asynq's layout (a scheduled task), due at its latest start: 60 s after its enqueue.
        expect((yield* io(() => zsetOf(c, k.scheduled))).map(([id]) => id)).toEqual([last.id])
        expect(yield* io(() => zsetOf(c, k.dueMs))).toEqual([[last.id, baseNowMs + 490 + 60_000]])
        expect(yield* io(() => c.hget(k.task(last.id), "state"))).toBe("scheduled")
        expect(yield* io(() => c.keys(`${k.taskPrefix}*`))).toHaveLength(2)
        // Another key is free.
        const other = yield* enqueueKeepLast("kl:sync", { n: 99 }, { key: "user:2" }, { queue: q })
        expect(other.waiting).toBe(false)
        // A release for a task that has not finished does nothing (a retry keeps the key).
        expect(
          yield* runScript(keepLastReleaseScript, { queue: q, key: "user:1", id: first.info.id, nowMs: baseNowMs })
        ).toBe(0)
        // The current task completes; the release makes the waiting one pending, the key's current task.
        yield* complete(leased.tasks[0]!.msg)
        expect(
          yield* runScript(keepLastReleaseScript, {
            queue: q,
            key: "user:1",
            id: first.info.id,
            nowMs: baseNowMs + 500
          })
        ).toBe(2)
        // Sent again (its reply lost): nothing more.
        expect(
          yield* runScript(keepLastReleaseScript, {
            queue: q,
            key: "user:1",
            id: first.info.id,
            nowMs: baseNowMs + 500
          })
        ).toBe(0)
        expect(yield* io(() => c.zcard(k.scheduled))).toBe(0)
        expect(yield* io(() => c.zcard(k.dueMs))).toBe(0)
        expect(yield* io(() => c.hgetall(k.keepLast("user:1")))).toEqual({ current: last.id })
        const next = yield* dequeueLease({ queues: [q], count: 10 })
        const byKey = new Map(next.tasks.map((t) => [t.msg.headers[keepLastHeader], t.msg]))
        expect(byKey.get("user:1")!.id).toBe(last.id)
        expect(payloadOf(byKey.get("user:1")!.payload)).toEqual({ n: 50 })
        // It finishes with nothing waiting: the key is deleted (free).
        yield* complete(byKey.get("user:1")!)
        expect(
          yield* runScript(keepLastReleaseScript, { queue: q, key: "user:1", id: last.id, nowMs: baseNowMs + 600 })
        ).toBe(1)
        expect(yield* io(() => c.exists(k.keepLast("user:1")))).toBe(0)
        const again = yield* enqueueKeepLast("kl:sync", { n: 100 }, { key: "user:1" }, { queue: q })
        expect(again.waiting).toBe(false)
      })
  )

  it.effect(
    "nothing released it (a Go server ran the task, a worker died): the next enqueue finds the current task finished and runs now; the waiting one starts at its latest start",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "kl-heal"
        const k = queueKeys(q)
        const first = yield* enqueueKeepLast("kl:sync", { n: 0 }, { key: "a" }, { queue: q })
        const waiting = yield* enqueueKeepLast("kl:sync", { n: 1 }, { key: "a", maxWait: 5000 }, { queue: q })
        expect(waiting.waiting).toBe(true)
        // The current task is done without a release (as a Go server does: completed, no retention, hash gone).
        const leased = yield* dequeueLease({ queues: [q], count: 1 })
        yield* complete(leased.tasks[0]!.msg)
        expect(yield* io(() => c.exists(k.task(first.info.id)))).toBe(0)
        // The waiting task's latest start: not before, then an ordinary forward makes it pending.
        yield* TestClock.setTime(baseNowMs + 4999)
        yield* forward({ queues: [q] })
        expect(yield* io(() => c.llen(k.pending))).toBe(0)
        yield* TestClock.setTime(baseNowMs + 5000)
        yield* forward({ queues: [q] })
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual([waiting.info.id])
        // It counts as the key's current task now: a new enqueue waits behind it.
        const behind = yield* enqueueKeepLast("kl:sync", { n: 2 }, { key: "a" }, { queue: q })
        expect(behind).toMatchObject({ waiting: true, replaced: false })
        expect(yield* io(() => c.hgetall(k.keepLast("a")))).toEqual({
          current: waiting.info.id,
          waiting: behind.info.id
        })
        // Both finish without a release: the next enqueue replaces the leftover waiting task and runs now.
        const run = yield* dequeueLease({ queues: [q], count: 1 })
        yield* complete(run.tasks[0]!.msg)
        const now = yield* enqueueKeepLast("kl:sync", { n: 3 }, { key: "a" }, { queue: q })
        expect(now).toMatchObject({ waiting: false, replaced: true })
        expect(yield* io(() => c.exists(k.task(behind.info.id)))).toBe(0)
        expect(yield* io(() => c.zcard(k.scheduled))).toBe(0)
        const msg = decodeTaskMessage((yield* io(() => c.hgetBuffer(k.task(now.info.id), "msg")))!)
        expect(payloadOf(msg.payload)).toEqual({ n: 3 })
      })
  )

  it.effect("a bad key or maxWait, and options that set the task's timing or id, are refused; nothing is written", () =>
    Effect.gen(function* () {
      const refused = (eff: Effect.Effect<unknown, { readonly field: string } | { readonly _tag: string }, never>) =>
        Effect.map(Effect.flip(eff), (e) => ("field" in e ? e.field : e._tag))
      const q = { queue: "kl-bad" }
      expect(yield* refused(enqueueKeepLast("t", 1, { key: "" }, q) as never)).toBe("keepLast.key")
      expect(yield* refused(enqueueKeepLast("t", 1, { key: "k", maxWait: 10 }, q) as never)).toBe("keepLast.maxWait")
      for (const [field, value] of [
        ["processIn", 5000],
        ["processAt", new Date()],
        ["group", "g"],
        ["unique", 5000],
        ["taskId", "fixed"]
      ] as const) {
        expect(yield* refused(enqueueKeepLast("t", 1, { key: "k" }, { ...q, [field]: value }) as never)).toBe(field)
      }
      const e = yield* Effect.flip(enqueueKeepLast("t", 1, { key: "k" }, { ...q, processIn: 5000 }))
      expect(e.message).toBe(
        "processIn cannot be combined with keepLast: keep-last decides when the task runs and which one does"
      )
      expect(yield* io(() => c.keys("asynq:{kl-bad}:*"))).toEqual([])
    })
  )
  it.effect(
    "a current task archived or deleted by something else than its worker (the recoverer, the inspector) releases the waiting task in the same script",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "kl-out"
        const k = queueKeys(q)
        const pair = (key: string, retry?: number) =>
          Effect.gen(function* () {
            const options = retry === undefined ? { queue: q } : { queue: q, maxRetry: retry }
            const current = yield* enqueueKeepLast("kl:push", { n: 1 }, { key, maxWait: 3_600_000 }, options)
            const waiting = yield* enqueueKeepLast("kl:push", { n: 2 }, { key, maxWait: 3_600_000 }, options)
            expect(waiting.waiting).toBe(true)
            return { current: current.info.id, waiting: waiting.info.id }
          })
        const released = (key: string, waitingId: string) =>
          Effect.gen(function* () {
            expect(yield* io(() => c.hget(k.task(waitingId), "state"))).toBe("pending")
            expect(yield* io(() => c.lrange(k.pending, 0, -1))).toContain(waitingId)
            expect(yield* io(() => c.zscore(k.scheduled, waitingId))).toBeNull()
            expect(yield* io(() => c.hgetall(k.keepLast(key)))).toEqual({ current: waitingId })
          })

        // The recoverer archives a current task whose lease ran out with no retries left.
        const r = yield* pair("recovered", 0)
        const leased = yield* dequeueLease({ queues: [q], count: 1, leaseMs: 1_000 })
        expect(leased.tasks.map((t) => t.msg.id)).toEqual([r.current])
        yield* TestClock.adjust(60_000)
        expect((yield* recover({ queues: [q] })).archived).toBe(1)
        yield* released("recovered", r.waiting)

        // The inspector archives a current (pending) task; then deletes the new current one.
        const a = yield* pair("archived")
        yield* archiveTask(q, a.current)
        yield* released("archived", a.waiting)
        yield* deleteTask(q, a.waiting)
        expect(yield* io(() => c.exists(k.keepLast("archived")))).toBe(0)
        expect(yield* io(() => c.sismember(k.keyIndex, "k:archived"))).toBe(0)

        // Deleting a waiting task only clears it from its key.
        const w = yield* pair("waiting-deleted")
        yield* deleteTask(q, w.waiting)
        expect(yield* io(() => c.hgetall(k.keepLast("waiting-deleted")))).toEqual({ current: w.current })
      })
  )
})
