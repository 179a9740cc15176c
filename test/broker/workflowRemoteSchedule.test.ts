/**
 * The script that schedules a remote step's check (lua/workflowRemoteSchedule.lua), against a real
 * Redis, case by case. The case that matters most: a check that read its execution just before the
 * execution's run completed schedules the next check after the completion. That one must still be
 * written, or the chain of checks ends while a server still runs the remote task, and a failed
 * attempt's retry would run again for nobody (src/workflow/remoteStop.ts).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runScript } from "../../src/broker/script.js"
import { type WorkflowRemoteScheduleInput, workflowRemoteScheduleScript } from "../../src/broker/workflowRemote.js"
import { encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import { baseNowMs, io, makeMsg, stepsTestDb, testBrokerLayer } from "../support/arrange.js"

const c = stepsTestDb()

/** A check of step "double/1" of execution `executionId` on control queue `queue`, due a second from now. */
const check = (
  queue: string,
  executionId: string,
  mode: WorkflowRemoteScheduleInput["mode"],
  n: number
): WorkflowRemoteScheduleInput => {
  const taskId = `rcheck:${executionId}:double/1#${n}`
  return {
    queue,
    executionId,
    deferredField: "d:RemoteStep/double/1",
    markerField: "r:double/1",
    markerValue: JSON.stringify({ queue: "images", taskId: "remote-task" }),
    mode,
    taskId,
    taskMessage: encodeTaskMessage(makeMsg(queue, taskId, { type: "effect-asynq:wf:remote" })),
    dueMs: baseNowMs + 1000
  }
}

/** An execution hash in `state` (with the step's outcome recorded when `recorded`). */
const execution = (queue: string, executionId: string, state: string, recorded = false) =>
  io(async () => {
    const key = workflowExecutionKey(queue, executionId)
    await c.hset(key, "state", state, "r:double/1", JSON.stringify({ queue: "images", taskId: "remote-task" }))
    if (recorded) await c.hset(key, "d:RemoteStep/double/1", "{}")
  })

const scheduled = (queue: string) => io(() => c.zrange(queueKeys(queue).scheduled, "0", "-1"))

layer(testBrokerLayer())("workflowRemoteSchedule (real Redis)", (it) => {
  it.effect("a next check of a suspended execution is written: the check task scheduled", () =>
    Effect.gen(function* () {
      yield* execution("wrs-1", "x1", "suspended")
      expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-1", "x1", "next", 1))).toBe(true)
      expect(yield* scheduled("wrs-1")).toEqual(["rcheck:x1:double/1#1"])
      expect(yield* io(() => c.hget(queueKeys("wrs-1").task("rcheck:x1:double/1#1"), "state"))).toBe("scheduled")
    })
  )

  it.effect(
    "a next check of an execution that completed without the step's outcome is still written (it stops or follows the remote task)",
    () =>
      Effect.gen(function* () {
        yield* execution("wrs-2", "x2", "complete")
        expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-2", "x2", "next", 4))).toBe(true)
        expect(yield* scheduled("wrs-2")).toEqual(["rcheck:x2:double/1#4"])
      })
  )

  it.effect(
    "nothing is written once the outcome is in, once the execution is gone, or for a dispatch after completion",
    () =>
      Effect.gen(function* () {
        yield* execution("wrs-3", "recorded", "complete", true)
        expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-3", "recorded", "next", 1))).toBe(false)
        expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-3", "gone", "next", 1))).toBe(false)
        yield* execution("wrs-3", "done", "complete")
        expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-3", "done", "first", 0))).toBe(false)
        expect(yield* scheduled("wrs-3")).toEqual([])
      })
  )

  it.effect("a first check records the dispatch once: a replay's second first check writes nothing", () =>
    Effect.gen(function* () {
      yield* io(() => c.hset(workflowExecutionKey("wrs-4", "x4"), "state", "running"))
      expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-4", "x4", "first", 0))).toBe(true)
      expect(yield* io(() => c.hget(workflowExecutionKey("wrs-4", "x4"), "r:double/1"))).toBe(
        JSON.stringify({ queue: "images", taskId: "remote-task" })
      )
      expect(yield* runScript(workflowRemoteScheduleScript, check("wrs-4", "x4", "first", 0))).toBe(false)
      expect(yield* scheduled("wrs-4")).toEqual(["rcheck:x4:double/1#0"])
    })
  )
})
