/**
 * Versions: an execution records a version when it starts (the workflow's `Version` annotation,
 * else the engine layer's `version`); every run of it reads that one through `workflowVersion`,
 * even on a worker started later with another version; the inspector shows it.
 */
import { Context, Effect, Exit, Layer, Schedule, Schema } from "effect"
import { DurableDeferred, Workflow, type WorkflowEngine } from "effect/workflow"
import { describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { getWorkflowExecution } from "../../src/inspector/index.js"
import { layer, Version, workflowVersion } from "../../src/workflow/index.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { runCli } from "../cli/runCli.js"
import { engineLayer, normalize, runProgram } from "./support.js"

const Ship = Workflow.make("Wf.Versioned", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const Go = DurableDeferred.make("go")
/** Reads the version before and after a suspension: both runs see the recorded one. */
const ShipLive = (code: string) =>
  Ship.toLayer(() =>
    Effect.gen(function* () {
      const before = yield* workflowVersion
      yield* DurableDeferred.await(Go)
      const after = yield* workflowVersion
      // How a workflow changes while old executions are in flight: branch on the recorded version.
      const path = after === "2" ? "new path" : "old path"
      return `${before ?? "none"}/${after ?? "none"} ${path} (code ${code})`
    })
  )

const inspect = (prefix: string, id: string) =>
  Effect.runPromise(
    getWorkflowExecution("Wf.Versioned", id, { queue: prefix }).pipe(
      Effect.provide(testBrokerLayer() as Layer.Layer<Broker>)
    )
  )

describe("versions", () => {
  it("recorded at start from the layer's version; a worker of the next version still runs the execution as the version it started with", async () => {
    await flushTestDb()
    const prefix = "versions"
    // A v1 worker starts the execution, which suspends on the deferred.
    const first = await runProgram(
      engineLayer("redis", prefix, { version: "1" }),
      ShipLive("v1"),
      Effect.gen(function* () {
        const id = yield* Ship.execute({ id: "old" }, { discard: true })
        yield* Ship.poll(id).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (o) => o._tag === "Some" }),
          Effect.timeout("10 seconds")
        )
        return id
      })
    )
    expect(Exit.isSuccess(first)).toBe(true)
    const id = Exit.isSuccess(first) ? first.value : ""
    expect((await inspect(prefix, id)).version).toBe("1")
    const shown = await runCli(["workflow", "inspect", "Wf.Versioned", id, "--prefix", prefix], {
      REDIS_URL: testRedisUrl()
    })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/^version: +1$/m)
    // A v2 worker (deployed meanwhile) completes it, and starts a new one.
    const second = await runProgram(
      engineLayer("redis", prefix, { version: "2" }),
      ShipLive("v2"),
      Effect.gen(function* () {
        for (const p of ["old", "new"]) {
          const token = yield* DurableDeferred.tokenFromPayload(Go, { workflow: Ship, payload: { id: p } })
          yield* DurableDeferred.succeed(Go, { token, value: undefined })
        }
        return [yield* Ship.execute({ id: "old" }), yield* Ship.execute({ id: "new" })]
      })
    )
    expect(normalize(second)).toEqual({ success: ["1/1 old path (code v2)", "2/2 new path (code v2)"] })
  })

  it("the workflow's Version annotation wins over the layer's; without either, none is recorded", async () => {
    const prefix = "versions-annotated"
    const Annotated = Workflow.make("Wf.Annotated", {
      payload: { id: Schema.String },
      success: Schema.String,
      idempotencyKey: ({ id }) => id,
      annotations: Context.make(Version, "7")
    })
    const Plain = Workflow.make("Wf.Plain", {
      payload: { id: Schema.String },
      success: Schema.String,
      idempotencyKey: ({ id }) => id
    })
    const read = Effect.map(workflowVersion, (v) => v ?? "none")
    const exit = await runProgram(
      engineLayer("redis", prefix, { version: "3" }),
      Layer.mergeAll(
        Annotated.toLayer(() => read),
        Plain.toLayer(() => read)
      ),
      Effect.all([Annotated.execute({ id: "a" }), Plain.execute({ id: "p" })])
    )
    expect(normalize(exit)).toEqual({ success: ["7", "3"] })
    const none = await runProgram(
      engineLayer("redis", `${prefix}-none`),
      Plain.toLayer(() => read),
      Plain.execute({ id: "p" })
    )
    expect(normalize(none)).toEqual({ success: "none" })
    // Under effect's in-memory engine: the annotation.
    const memory = await runProgram(
      engineLayer("memory", "unused"),
      Annotated.toLayer(() => read) as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>,
      Annotated.execute({ id: "a" })
    )
    expect(normalize(memory)).toEqual({ success: "7" })
  })

  it("a bad version fails the layer's build with InvalidArgument", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Layer.build(layer({ version: "" }).pipe(Layer.provide(testBrokerLayer() as Layer.Layer<Broker>)))
      ) as Effect.Effect<unknown, unknown>
    )
    expect(normalize(exit)).toMatchObject({ failure: [{ fail: { _tag: "InvalidArgument", field: "version" } }] })
  })
})
