/**
 * The engine's caps: steps recorded per execution (`maxSteps`), bytes of stored state
 * (`maxStateBytes`) and of one stored result (`maxResultBytes`). Going past one fails the execution
 * with WorkflowCapExceeded naming the cap; the step past it is not run (a count) or not stored (a
 * size); a bad cap fails the layer's build with InvalidArgument.
 */
import { Effect, Exit, Layer, Schedule, Schema } from "effect"
import { Activity, Workflow } from "effect/workflow"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import { controlQueueOf, layer } from "../../src/workflow/index.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { engineLayer, normalize, runProgram } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

const Steps = Workflow.make("Wf.Steps", {
  payload: { id: Schema.String, count: Schema.Number, size: Schema.Number },
  success: Schema.Number,
  idempotencyKey: ({ id }) => id
})
const ran: Array<string> = []
const StepsLive = Steps.toLayer(({ count, size }) =>
  Effect.gen(function* () {
    for (let i = 0; i < count; i++)
      yield* Activity.make({
        name: `step/${i}`,
        success: Schema.String,
        execute: Effect.sync(() => {
          ran.push(`step/${i}`)
          return "x".repeat(size)
        })
      })
    return count
  })
)

const hashOf = async (prefix: string, id: string) => {
  const executionId = await Effect.runPromise(Steps.executionId({ id, count: 0, size: 0 }))
  return workflowExecutionKey(controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Steps", executionId), executionId)
}

describe("caps", () => {
  it("maxSteps: the step past the cap does not run; the execution fails with WorkflowCapExceeded naming maxSteps", async () => {
    ran.length = 0
    const exit = await runProgram(
      engineLayer("redis", "caps", { maxSteps: 3 }),
      StepsLive,
      Steps.execute({ id: "steps", count: 5, size: 1 })
    )
    expect(normalize(exit)).toEqual({
      failure: [{ die: expect.stringMatching(/would record 4 steps .*past the engine's cap maxSteps = 3$/) }]
    })
    expect(ran).toEqual(["step/0", "step/1", "step/2"])
    const h = await c.hgetall(await hashOf("caps", "steps"))
    expect(
      Object.keys(h)
        .filter((f) => f.startsWith("a:"))
        .sort()
    ).toEqual(["a:step/0/1", "a:step/1/1", "a:step/2/1"])
    expect(h.state).toBe("complete")
    // The stored result names the error and the cap.
    expect(h.result).toContain("WorkflowCapExceeded")
    expect(h.result).toContain("maxSteps")
  })

  it("within the caps nothing changes", async () => {
    const exit = await runProgram(
      engineLayer("redis", "caps", { maxSteps: 5, maxResultBytes: 200, maxStateBytes: 100_000 }),
      StepsLive,
      Steps.execute({ id: "within", count: 5, size: 100 })
    )
    expect(normalize(exit)).toEqual({ success: 5 })
  })

  it("maxResultBytes: a result larger than the cap is not stored; the execution fails naming maxResultBytes", async () => {
    const exit = await runProgram(
      engineLayer("redis", "caps", { maxResultBytes: 100 }),
      StepsLive,
      Steps.execute({ id: "big", count: 1, size: 200 })
    )
    expect(normalize(exit)).toEqual({
      failure: [
        {
          die: expect.stringMatching(/would record a result of \d+ bytes, past the engine's cap maxResultBytes = 100$/)
        }
      ]
    })
    expect(await c.hexists(await hashOf("caps", "big"), "a:step/0/1")).toBe(0)
  })

  it("maxStateBytes: the result that would take the stored state past the cap is not stored; the execution fails naming maxStateBytes", async () => {
    ran.length = 0
    const exit = await runProgram(
      engineLayer("redis", "caps", { maxStateBytes: 1000 }),
      StepsLive,
      Steps.execute({ id: "state", count: 10, size: 300 })
    )
    expect(normalize(exit)).toEqual({
      failure: [
        {
          die: expect.stringMatching(
            /would record \d+ bytes of stored state, past the engine's cap maxStateBytes = 1000$/
          )
        }
      ]
    })
    const h = await c.hgetall(await hashOf("caps", "state"))
    const stored = Object.keys(h).filter((f) => f.startsWith("a:"))
    // Two results of ~330 bytes fit under 1000 bytes with the execution's own fields; the third does not.
    expect(stored.length).toBeGreaterThanOrEqual(1)
    expect(stored.length).toBeLessThan(3)
    expect(ran.length).toBe(stored.length + 1)
  })

  it("under SuspendOnFailure the execution is parked by the cap, and resumes past it once the cap is raised", async () => {
    const Parked = Steps.annotate(Workflow.SuspendOnFailure, true)
    const exit1 = await runProgram(
      engineLayer("redis", "caps-park", { maxSteps: 2 }),
      Parked.toLayer(({ count }) =>
        Effect.gen(function* () {
          for (let i = 0; i < count; i++) yield* Activity.make({ name: `p/${i}`, execute: Effect.void })
          return count
        })
      ),
      Effect.flatMap(Parked.execute({ id: "park", count: 3, size: 0 }, { discard: true }), (id) =>
        Parked.poll(id).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (o) => o._tag === "Some" }),
          Effect.timeout("10 seconds")
        )
      )
    )
    expect(normalize(exit1)).toMatchObject({ success: { _tag: "Some", value: { _tag: "Suspended", failed: true } } })
    const exit2 = await runProgram(
      engineLayer("redis", "caps-park", { maxSteps: 10 }),
      Parked.toLayer(({ count }) =>
        Effect.gen(function* () {
          for (let i = 0; i < count; i++) yield* Activity.make({ name: `p/${i}`, execute: Effect.void })
          return count
        })
      ),
      Effect.gen(function* () {
        const id = yield* Parked.executionId({ id: "park", count: 3, size: 0 })
        yield* Parked.resume(id)
        return yield* Parked.execute({ id: "park", count: 3, size: 0 })
      })
    )
    expect(normalize(exit2)).toEqual({ success: 3 })
  })

  it("a bad cap fails the layer's build with InvalidArgument naming it", async () => {
    for (const [field, options] of [
      ["maxSteps", { maxSteps: 0 }],
      ["maxStateBytes", { maxStateBytes: 1.5 }],
      ["maxResultBytes", { maxResultBytes: -1 }]
    ] as const) {
      const exit = await Effect.runPromiseExit(
        Effect.scoped(
          Layer.build(layer(options).pipe(Layer.provide(testBrokerLayer() as Layer.Layer<Broker>)))
        ) as Effect.Effect<unknown, unknown>
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
      expect(error).toMatchObject({ error: { _tag: "InvalidArgument", field } })
    }
  })
})
