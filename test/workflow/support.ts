/** Running workflow programs against effect's in-memory engine and effect-asynq's durable one, on this file's database. */
import { Cause, type Duration, Effect, Exit, Layer, ManagedRuntime, References } from "effect"
import { WorkflowEngine } from "effect/workflow"
import type { Broker } from "../../src/broker/Broker.js"
import { layer, type WorkflowLayerOptions } from "../../src/workflow/index.js"
import { testBrokerLayer } from "../support/arrange.js"

export type EngineKind = "memory" | "redis"
export const engines: ReadonlyArray<EngineKind> = ["memory", "redis"]

/** The engine layer of a kind; the durable one on its own control-queue prefix (isolated per test). */
export const engineLayer = (
  kind: EngineKind,
  queue: string,
  options: WorkflowLayerOptions = {}
): Layer.Layer<WorkflowEngine.WorkflowEngine> =>
  kind === "memory"
    ? WorkflowEngine.layerMemory
    : (layer({ queue, ...options, server: { shutdownTimeoutMs: 500, ...options.server } }).pipe(
        Layer.provide(testBrokerLayer() as Layer.Layer<Broker>)
      ) as Layer.Layer<WorkflowEngine.WorkflowEngine>)

const quiet = process.env.DEBUG_TESTS ? Layer.empty : Layer.succeed(References.MinimumLogLevel, "Error")

/** A runtime with an engine and the workflows registered with it (`Workflow.toLayer` layers). */
export const makeRuntime = (
  engine: Layer.Layer<WorkflowEngine.WorkflowEngine>,
  registrations: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
) => ManagedRuntime.make(registrations.pipe(Layer.provideMerge(engine), Layer.provide(quiet)))

/** Runs `program` with an engine and registrations; its exit (bounded: 20 s, then a timeout failure). */
export const runProgram = async <A, E>(
  engine: Layer.Layer<WorkflowEngine.WorkflowEngine>,
  registrations: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>,
  program: Effect.Effect<A, E, WorkflowEngine.WorkflowEngine>,
  bound: Duration.Input = "20 seconds"
): Promise<Exit.Exit<A, E | Cause.TimeoutError>> => {
  const rt = makeRuntime(engine, registrations)
  try {
    return await rt.runPromise(Effect.exit(Effect.timeout(program, bound)))
  } finally {
    await rt.dispose()
  }
}

/** An exit as plain data, comparable across engines (a stored defect comes back as an Error with the same message). */
export const normalize = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isSuccess(exit)
    ? { success: exit.value }
    : {
        failure: exit.cause.reasons.map((r) =>
          Cause.isFailReason(r)
            ? { fail: r.error }
            : Cause.isDieReason(r)
              ? { die: r.defect instanceof Error ? r.defect.message : String(r.defect) }
              : { interrupt: true }
        )
      }
