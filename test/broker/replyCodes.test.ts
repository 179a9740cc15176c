/**
 * The reply-code table against real scripts: every code the table maps comes back from the real
 * script as its tagged error (with the message tests and users rely on), through the script's
 * descriptor.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { archiveScript } from "../../src/broker/archive.js"
import { completeScript } from "../../src/broker/complete.js"
import { deleteQueueScript } from "../../src/broker/deleteQueue.js"
import { bindTaskWrite, type TaskWrite } from "../../src/broker/enqueue.js"
import { getTaskInfoScript } from "../../src/broker/getTaskInfo.js"
import { pauseQueueScript, unpauseQueueScript } from "../../src/broker/pauseQueue.js"
import { replyCodes } from "../../src/broker/replyCodes.js"
import { requeueScript } from "../../src/broker/requeue.js"
import { retryScript } from "../../src/broker/retry.js"
import { claimScript } from "../../src/broker/scheduler.js"
import { runScript, runScripts } from "../../src/broker/script.js"
import { archiveTaskScript, deleteTaskScript, runTaskScript } from "../../src/broker/taskActions.js"
import { writeResultScript } from "../../src/broker/writeResult.js"
import { luaSources } from "../../src/redis/lua.generated.js"
import { queueKeys } from "../../src/wire/keys.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import {
  baseNowMs,
  io,
  makeMsg,
  putActive,
  putInZset,
  putPending,
  stepsTestDb,
  testBrokerLayer,
  baseNowSec as nowSec
} from "../support/arrange.js"

const c = stepsTestDb()

const tagOf = <A, E extends { readonly _tag: string; readonly message: string }>(eff: Effect.Effect<A, E, any>) =>
  Effect.map(Effect.flip(eff), (e) => ({ tag: e._tag, message: e.message }))

layer(testBrokerLayer())("reply-code table (real scripts)", (it) => {
  it("names only scripts that exist", () => {
    for (const script of Object.keys(replyCodes)) expect(Object.keys(luaSources)).toContain(script)
  })

  it.effect("task writes: 0 → TaskIdConflict, -1 → DuplicateTask, for pending, scheduled and grouped writes", () =>
    Effect.gen(function* () {
      const q = "rc-write"
      yield* io(() => putPending(c, makeMsg(q, "taken"), baseNowMs))
      // Another task under the taken id (the same message again would be the same write: a success).
      const other = makeMsg(q, "taken", { type: "other" })
      const lock = uniqueKey(q, "t", undefined)
      const targets: ReadonlyArray<TaskWrite["target"]> = [
        { state: "pending" },
        { state: "scheduled", processAtMs: baseNowMs + 60_000 },
        { state: "aggregating", group: "g" }
      ]
      for (const target of targets) {
        const conflict = yield* tagOf(
          Effect.flatMap(runScripts([bindTaskWrite({ msg: other, target, nowMs: baseNowMs })]), ([r]) =>
            Effect.fromResult(r!)
          )
        )
        expect(conflict).toEqual({
          tag: "TaskIdConflict",
          message: `task ID conflicts with another task: a task with id "taken" already exists in queue "${q}"`
        })
      }
      yield* io(() => c.set(lock, "someone", "EX", 60))
      for (const [i, target] of targets.entries()) {
        const msg = makeMsg(q, `dup${i}`, { type: "t", uniqueKey: lock })
        const dup = yield* tagOf(
          Effect.flatMap(
            runScripts([bindTaskWrite({ msg, target, nowMs: baseNowMs, uniqueLockTtlMs: 60_000 })]),
            ([r]) => Effect.fromResult(r!)
          )
        )
        expect(dup.tag).toBe("DuplicateTask")
        expect(dup.message).toContain(`still unique-locked in queue "${q}" (lock ${lock})`)
      }
    })
  )

  it.effect("lease transitions: 0 → LeaseLost for complete, retry, archive and requeue", () =>
    Effect.gen(function* () {
      // A task that exists but is not active (it went back to pending): none of these is a resend
      // of the caller's own earlier move (code 2, see the next test).
      const msg = makeMsg("rc-lease", "gone")
      yield* io(() => putPending(c, msg, baseNowMs))
      const lost = (op: string) => ({
        tag: "LeaseLost",
        message: `cannot ${op} task gone in queue "rc-lease": it is no longer active under a lease (its lease expired and it was recovered, or it was deleted or moved)`
      })
      expect(yield* tagOf(runScript(completeScript, { msg, nowMs: baseNowMs }))).toEqual(lost("complete"))
      expect(
        yield* tagOf(runScript(retryScript, { updated: msg, retryAtMs: baseNowMs, isFailure: true, nowMs: baseNowMs }))
      ).toEqual(lost("retry"))
      expect(yield* tagOf(runScript(archiveScript, { updated: msg, nowMs: baseNowMs }))).toEqual(lost("archive"))
      // (a later time than the task's pending_since: not a resend of this requeue)
      expect(yield* tagOf(runScript(requeueScript, { msg, nowMs: baseNowMs + 1000 }))).toEqual(lost("requeue"))
    })
  )

  it.effect("lease transitions: 2 (already done by this same call: a resend after a lost reply) is a success", () =>
    Effect.gen(function* () {
      const msg = makeMsg("rc-lease2", "done")
      // Completed without retention: the task is gone.
      expect(yield* runScript(completeScript, { msg, nowMs: baseNowMs })).toBe("deleted")
      // Moved to the retry set / the archive holding exactly the message this call carries.
      const k = queueKeys("rc-lease2")
      yield* io(() => putInZset(c, msg, "retry", baseNowMs / 1000))
      yield* runScript(retryScript, { updated: msg, retryAtMs: baseNowMs, isFailure: true, nowMs: baseNowMs })
      yield* io(() => c.del(k.task(msg.id), k.retry))
      yield* io(() => putInZset(c, msg, "archived", baseNowMs / 1000))
      expect(yield* runScript(archiveScript, { updated: msg, nowMs: baseNowMs })).toEqual({ trimmed: 0 })
      // Nothing was counted.
      expect(yield* io(() => c.exists(k.processedTotal))).toBe(0)
    })
  )

  it.effect("writeResult -1 → TaskNotFound; pause 0 / unpause 0 → InvalidState", () =>
    Effect.gen(function* () {
      expect(
        yield* tagOf(runScript(writeResultScript, { queue: "rc-misc", id: "none", result: new Uint8Array([1]) }))
      ).toEqual({
        tag: "TaskNotFound",
        message: `cannot write the result of task none: no such task in queue "rc-misc"`
      })
      expect(yield* tagOf(runScript(unpauseQueueScript, { queue: "rc-misc" }))).toEqual({
        tag: "InvalidState",
        message: `queue "rc-misc" is not paused`
      })
      yield* runScript(pauseQueueScript, { queue: "rc-misc", nowMs: baseNowMs })
      expect(yield* tagOf(runScript(pauseQueueScript, { queue: "rc-misc", nowMs: baseNowMs }))).toEqual({
        tag: "InvalidState",
        message: `queue "rc-misc" is already paused`
      })
    })
  )

  it.effect("inspector task actions: 0 → TaskNotFound, -1 → InvalidState; getTask nil → TaskNotFound", () =>
    Effect.gen(function* () {
      const q = "rc-insp"
      const input = { queue: q, id: "none", nowMs: baseNowMs }
      const notFound = { tag: "TaskNotFound", message: `task "none" not found in queue "${q}"` }
      expect(yield* tagOf(runScript(runTaskScript, input))).toEqual(notFound)
      expect(yield* tagOf(runScript(archiveTaskScript, input))).toEqual(notFound)
      expect(yield* tagOf(runScript(deleteTaskScript, input))).toEqual(notFound)
      expect(yield* tagOf(runScript(getTaskInfoScript, { queue: q, id: "none" }))).toEqual(notFound)
      yield* io(() => putActive(c, makeMsg(q, "busy"), nowSec + 30))
      const busy = { queue: q, id: "busy", nowMs: baseNowMs }
      expect(yield* tagOf(runScript(runTaskScript, busy))).toEqual({
        tag: "InvalidState",
        message: `task "busy" is already running (active); it cannot be run again — cancel it if it must stop`
      })
      expect(yield* tagOf(runScript(archiveTaskScript, busy))).toEqual({
        tag: "InvalidState",
        message: `task "busy" is active (running) and cannot be archived; cancel it instead`
      })
      expect(yield* tagOf(runScript(deleteTaskScript, busy))).toEqual({
        tag: "InvalidState",
        message: `task "busy" is active (running) and cannot be deleted; cancel it first`
      })
    })
  )

  it.effect("removeQueue: -1 → QueueNotEmpty, -2 → InvalidState", () =>
    Effect.gen(function* () {
      yield* io(() => putPending(c, makeMsg("rc-full", "p"), baseNowMs))
      expect(
        yield* tagOf(runScript(deleteQueueScript, { queue: "rc-full", force: false, batch: 10, done: 0 }))
      ).toEqual({
        tag: "QueueNotEmpty",
        message: `queue "rc-full" is not empty (1 task(s)); delete its tasks first or force the deletion`
      })
      yield* io(() => putActive(c, makeMsg("rc-busy", "a"), nowSec + 30))
      expect(yield* tagOf(runScript(deleteQueueScript, { queue: "rc-busy", force: true, batch: 10, done: 0 }))).toEqual(
        {
          tag: "InvalidState",
          message: `queue "rc-busy" has 1 active task(s); it cannot be deleted while tasks run`
        }
      )
    })
  )

  it.effect("scheduler_claim: 0 and -1 are outcomes carrying TaskIdConflict and DuplicateTask", () =>
    Effect.gen(function* () {
      const q = "rc-sched"
      const taken = makeMsg(q, "taken")
      yield* io(() => putPending(c, taken, baseNowMs))
      const base = {
        entryId: "e1",
        scheduledAtMs: baseNowMs,
        nowMs: baseNowMs,
        recordTtlMs: 60_000,
        state: "pending" as const,
        generatedId: false
      }
      const conflict = yield* runScript(claimScript, { ...base, msg: taken })
      expect(conflict._tag).toBe("IdConflict")
      if (conflict._tag === "IdConflict") {
        expect(conflict.error._tag).toBe("TaskIdConflict")
        expect(conflict.error.message).toContain(
          `(periodic entry e1, occurrence ${new Date(baseNowMs).toISOString()} skipped)`
        )
      }
      const lock = uniqueKey(q, "t", undefined)
      yield* io(() => c.set(lock, "someone", "EX", 60))
      const dup = yield* runScript(claimScript, {
        ...base,
        entryId: "e2",
        msg: makeMsg(q, "fresh", { type: "t", uniqueKey: lock }),
        lockTtlMs: 60_000
      })
      expect(dup._tag).toBe("Duplicate")
      if (dup._tag === "Duplicate") expect(dup.error._tag).toBe("DuplicateTask")
    })
  )
})
