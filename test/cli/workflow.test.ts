/**
 * `effect-asynq workflow ls | inspect | resume | cancel` as a real CLI process, against executions
 * made by the real engine (running in this test process, so resume and cancel take effect).
 */
import { Cause, Effect, Exit, Option, Schedule, Schema } from "effect"
import { Activity, DurableDeferred, Workflow } from "effect/workflow"
import { beforeAll, describe, expect, it } from "vitest"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { engineLayer, runProgram } from "../workflow/support.js"
import { runCli } from "./runCli.js"

const cli = (...args: Array<string>) => Effect.promise(() => runCli(args, { REDIS_URL: testRedisUrl() }))

beforeAll(() => flushTestDb())

/** Waits (bounded: 10 s) until the execution has a result. */
const untilPolled = <A, E, R>(poll: Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R>) =>
  poll.pipe(
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: Option.isSome }),
    Effect.timeout("10 seconds")
  )

describe("effect-asynq workflow", { timeout: 120_000 }, () => {
  const Ship = Workflow.make("Wf.Ship", {
    payload: { order: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ order }) => order
  }).annotate(Workflow.SuspendOnFailure, true)
  const Pack = Activity.make({ name: "pack", success: Schema.String, execute: Effect.succeed("boxed") })

  it("ls and inspect show a failed execution and its activity; resume retries it; bad input exits 2, not found 1", async () => {
    let fixed = false
    const exit = await runProgram(
      engineLayer("redis", "cliwf"),
      Ship.toLayer(({ order }) =>
        Effect.gen(function* () {
          const box = yield* Pack
          if (!fixed) return yield* Effect.die(new Error("label printer offline"))
          return `${order} ${box}`
        })
      ),
      Effect.gen(function* () {
        const id = yield* Ship.execute({ order: "o-7" }, { discard: true })
        yield* untilPolled(Ship.poll(id))
        const ls = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf")
        const lsJson = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf", "--state", "failed", "--json")
        const lsComplete = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf", "--state", "complete")
        const inspect = yield* cli("workflow", "inspect", "Wf.Ship", id, "--prefix", "cliwf")
        const inspectJson = yield* cli("workflow", "inspect", "Wf.Ship", id, "--prefix", "cliwf", "--json")
        fixed = true
        const resume = yield* cli("workflow", "resume", "Wf.Ship", id, "--prefix", "cliwf")
        const result = yield* Ship.execute({ order: "o-7" })
        const cancelDone = yield* cli("workflow", "cancel", "Wf.Ship", id, "--prefix", "cliwf")
        const missing = yield* cli("workflow", "inspect", "Wf.Ship", "nope", "--prefix", "cliwf")
        const noWorkflow = yield* cli("workflow", "ls", "Wf.Nobody", "--prefix", "cliwf")
        const badPage = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf", "--page", "0")
        const badSize = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf", "--size", "0")
        const badState = yield* cli("workflow", "ls", "Wf.Ship", "--prefix", "cliwf", "--state", "sleepy")
        return {
          id,
          ls,
          lsJson,
          lsComplete,
          inspect,
          inspectJson,
          resume,
          result,
          cancelDone,
          missing,
          noWorkflow,
          badPage,
          badSize,
          badState
        }
      }),
      // a dozen CLI processes, each a Node start: bounded, with room for a loaded machine
      "90 seconds"
    )
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    const v = exit.value
    expect(v.ls.code).toBe(0)
    const [header, , row] = v.ls.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^ID\s+STATE\s+RUNS\s+OUTCOME\s+ERROR$/)
    expect(row!.split(/\s+/).slice(0, 4)).toEqual([v.id, "failed", "1", "suspended"])
    expect(row).toContain("label printer offline")
    const listed = JSON.parse(v.lsJson.stdout) as {
      more: boolean
      executions: Array<{ executionId: string; state: string; failed: boolean }>
    }
    expect(listed).toMatchObject({ more: false, executions: [{ executionId: v.id, state: "suspended", failed: true }] })
    expect(v.lsComplete).toMatchObject({ code: 0, stdout: 'No complete executions of workflow "Wf.Ship" on page 1.\n' })
    expect(v.inspect.code).toBe(0)
    expect(v.inspect.stdout).toMatch(/^state:\s+failed$/m)
    expect(v.inspect.stdout).toMatch(/^control queue:\s+cliwf:Wf\.Ship$/m)
    expect(v.inspect.stdout).toMatch(/^payload:\s+\{"order":"o-7"\}$/m)
    expect(v.inspect.stdout).toMatch(/^pack\s+1\s+done\s+"boxed"$/m)
    const detail = JSON.parse(v.inspectJson.stdout) as { activities: unknown; clocks: unknown; deferreds: unknown }
    expect(detail).toMatchObject({
      activities: [{ name: "pack", attempt: 1, status: "done", result: "boxed" }],
      deferreds: [],
      clocks: []
    })
    expect(v.resume).toMatchObject({
      code: 0,
      stdout: `Resumed execution "${v.id}" of workflow "Wf.Ship" (was failed): a run is enqueued.\n`
    })
    expect(v.result).toBe("o-7 boxed")
    expect(v.cancelDone.code).toBe(1)
    expect(v.cancelDone.stderr).toContain("is complete; there is nothing to cancel")
    expect(v.missing.code).toBe(1)
    expect(v.missing.stderr).toContain('workflow "Wf.Ship" has no execution "nope"')
    expect(v.noWorkflow.code).toBe(1)
    expect(v.noWorkflow.stderr).toContain('workflow "Wf.Nobody" has no control queue')
    expect(v.badPage.code).toBe(2)
    expect(v.badSize).toMatchObject({
      code: 2,
      stderr: "effect-asynq: --size must be an integer from 1 to 1000, got 0\n"
    })
    expect(v.badState.code).toBe(2)
  })

  const Hold = Workflow.make("Wf.Hold", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })
  const Release = DurableDeferred.make("release")

  it("cancel interrupts a waiting execution as Workflow.interrupt does: it completes interrupted, and inspect says so", async () => {
    const exit = await runProgram(
      engineLayer("redis", "cliwf"),
      Hold.toLayer(() => Effect.as(DurableDeferred.await(Release), "released")),
      Effect.gen(function* () {
        const id = yield* Hold.execute({ id: "h1" }, { discard: true })
        yield* untilPolled(Hold.poll(id))
        const cancel = yield* cli("workflow", "cancel", "Wf.Hold", id, "--prefix", "cliwf", "--json")
        const result = yield* Effect.exit(Hold.execute({ id: "h1" }))
        const inspect = yield* cli("workflow", "inspect", "Wf.Hold", id, "--prefix", "cliwf")
        return { id, cancel, result, inspect }
      })
    )
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    const v = exit.value
    expect(v.cancel.code).toBe(0)
    expect(JSON.parse(v.cancel.stdout)).toMatchObject({
      workflow: "Wf.Hold",
      action: "cancel",
      executionId: v.id,
      from: "suspended",
      outcome: "run-enqueued"
    })
    expect(Exit.isFailure(v.result) && Cause.hasInterruptsOnly(v.result.cause)).toBe(true)
    expect(v.inspect.stdout).toMatch(/^state:\s+complete \(cancel requested\)$/m)
    expect(v.inspect.stdout).toMatch(/^error:\s+interrupted$/m)
    // Complete: it waits on nothing any more.
    expect(v.inspect.stdout).toContain("Deferreds: none completed or waited on.")
  })

  const Gate = Workflow.make("Wf.Gate", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })
  const Open = DurableDeferred.make("open", { success: Schema.String })
  const Sign = DurableDeferred.make("sign", { success: Schema.String })

  it("inspect shows the deferreds a suspended execution waits on as waiting, and as done once completed", async () => {
    const exit = await runProgram(
      engineLayer("redis", "cliwf"),
      Gate.toLayer(() =>
        Effect.gen(function* () {
          const opened = yield* DurableDeferred.await(Open)
          const signed = yield* DurableDeferred.await(Sign)
          return `${opened} ${signed}`
        })
      ),
      Effect.gen(function* () {
        const id = yield* Gate.execute({ id: "g1" }, { discard: true })
        yield* untilPolled(Gate.poll(id))
        const first = yield* cli("workflow", "inspect", "Wf.Gate", id, "--prefix", "cliwf")
        const firstJson = yield* cli("workflow", "inspect", "Wf.Gate", id, "--prefix", "cliwf", "--json")
        const open = yield* DurableDeferred.tokenFromPayload(Open, { workflow: Gate, payload: { id: "g1" } })
        yield* DurableDeferred.succeed(Open, { token: open, value: "door" })
        // Bounded: the next run suspends on "sign" and records it.
        const second = yield* cli("workflow", "inspect", "Wf.Gate", id, "--prefix", "cliwf").pipe(
          Effect.repeat({
            schedule: Schedule.spaced("50 millis"),
            until: (r) => /^sign\s+waiting\s+-$/m.test(r.stdout)
          }),
          Effect.timeout("10 seconds")
        )
        const sign = yield* DurableDeferred.tokenFromPayload(Sign, { workflow: Gate, payload: { id: "g1" } })
        yield* DurableDeferred.succeed(Sign, { token: sign, value: "ink" })
        const result = yield* Gate.execute({ id: "g1" })
        const last = yield* cli("workflow", "inspect", "Wf.Gate", id, "--prefix", "cliwf", "--json")
        return { first, firstJson, second, result, last }
      })
    )
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    const v = exit.value
    expect(v.first.code).toBe(0)
    expect(v.first.stdout).toMatch(/^state:\s+suspended$/m)
    // A plain suspension is no error.
    expect(v.first.stdout).toMatch(/^error:\s+-$/m)
    expect(v.first.stdout).toMatch(/^Deferreds:\nNAME\s+STATUS\s+VALUE \/ ERROR$/m)
    expect(v.first.stdout).toMatch(/^open\s+waiting\s+-$/m)
    expect(JSON.parse(v.firstJson.stdout).deferreds).toEqual([{ name: "open", status: "waiting" }])
    expect(v.second.stdout).toMatch(/^open\s+done\s+"door"$/m)
    expect(v.second.stdout).toMatch(/^sign\s+waiting\s+-$/m)
    expect(v.result).toBe("door ink")
    expect(JSON.parse(v.last.stdout).deferreds).toEqual([
      { name: "open", status: "done", value: "door" },
      { name: "sign", status: "done", value: "ink" }
    ])
  })
})
