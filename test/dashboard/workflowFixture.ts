/**
 * Workflow executions for the dashboard tests, made by the real engine: a worker process
 * (fixtures/orderWorker.ts) runs `Shop.Order`, and this process (an engine that registers nothing)
 * starts three orders — one that completes, one that fails (parked by SuspendOnFailure) and one
 * waiting on a deferred — and a refund whose activity fails, and waits until each is there.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, Layer, ManagedRuntime } from "effect"
import { DurableDeferred, type WorkflowEngine } from "effect/workflow"
import type { Broker } from "../../src/broker/Broker.js"
import { getWorkflowExecution } from "../../src/inspector/getWorkflowExecution.js"
import type { WorkflowExecutionInfo } from "../../src/inspector/workflowTypes.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { engineLayer, makeRuntime } from "../workflow/support.js"
import { Approval, fixedKey, Order, Refund, releaseKey } from "./fixtures/orderWorkflow.js"

const root = fileURLToPath(new URL("../../", import.meta.url))

export interface WorkflowData {
  /** Execution ids: complete, failed (SuspendOnFailure), waiting on "approval"; a refund that failed (Shop.Refund). */
  readonly ids: { readonly done: string; readonly failed: string; readonly waiting: string; readonly refund: string }
  /** The execution's detail, as the inspector reads it. */
  readonly detail: (id: string) => Promise<WorkflowExecutionInfo>
  /** Waits (bounded) until the execution's detail passes `ok`. */
  readonly until: (
    id: string,
    ok: (x: WorkflowExecutionInfo) => boolean,
    what: string
  ) => Promise<WorkflowExecutionInfo>
  /** Lets a failed order's next run succeed. */
  readonly fixCard: () => Promise<void>
  /** Starts a `hold` order and waits until its run is busy packing (state running); its id. */
  readonly startHold: (order: string) => Promise<string>
  /** Ends every `hold` order's packing. */
  readonly release: () => Promise<void>
  /** Completes the waiting order's approval. */
  readonly approve: (by: string) => Promise<void>
  /** What the worker process wrote. */
  readonly output: () => string
  readonly close: () => Promise<void>
}

export const arrangeWorkflowData = async (url: string): Promise<WorkflowData> => {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "test/dashboard/fixtures/orderWorker.ts"], {
    cwd: root,
    env: { ...process.env, REDIS_URL: url },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // Starts and completes executions; registers no workflow (the worker process runs them).
  const starter = makeRuntime(
    engineLayer("redis", "workflow"),
    Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
  )
  const inspector = ManagedRuntime.make(brokerLayer(url))
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>) => inspector.runPromise(eff)
  const raw = rawClient()
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await starter.dispose()
    await inspector.dispose()
    raw.disconnect()
  }
  try {
    const [done, failed, waiting, refund] = await starter.runPromise(
      Effect.all([
        Order.execute({ order: "o-1", kind: "ok" }, { discard: true }),
        Order.execute({ order: "o-2", kind: "fail" }, { discard: true }),
        Order.execute({ order: "o-3", kind: "wait" }, { discard: true }),
        Refund.execute({ order: "o-9" }, { discard: true })
      ])
    )
    const detail = (id: string) => run(getWorkflowExecution("Shop.Order", id))
    const until = (id: string, ok: (x: WorkflowExecutionInfo) => boolean, what: string) =>
      waitFor(what, () => detail(id), ok, { timeoutMs: 30_000 }).catch((e) => {
        throw new Error(`${e}\nworker output:\n${out}`)
      })
    await until(done, (x) => x.state === "complete", "the ok order complete")
    await until(failed, (x) => x.state === "suspended" && x.failed, "the fail order parked by SuspendOnFailure")
    await until(
      waiting,
      (x) => x.state === "suspended" && x.deferreds.some((d) => d.status === "waiting"),
      "the wait order waiting on its approval"
    )
    await waitFor(
      "the refund complete",
      () => run(getWorkflowExecution("Shop.Refund", refund)),
      (x) => x.state === "complete",
      { timeoutMs: 30_000 }
    )
    return {
      ids: { done, failed, waiting, refund },
      detail,
      until,
      startHold: async (order) => {
        const id = await starter.runPromise(Order.execute({ order, kind: "hold" }, { discard: true }))
        await until(
          id,
          (x) => x.state === "running" && x.activities.some((a) => a.name === "reserve"),
          "the hold order running (packing)"
        )
        return id
      },
      release: async () => {
        await raw.set(releaseKey, "1")
      },
      fixCard: async () => {
        await raw.set(fixedKey, "1")
      },
      approve: (by) =>
        starter.runPromise(
          Effect.gen(function* () {
            const token = yield* DurableDeferred.tokenFromPayload(Approval, {
              workflow: Order,
              payload: { order: "o-3", kind: "wait" }
            })
            yield* DurableDeferred.succeed(Approval, { token, value: by })
          })
        ),
      output: () => out,
      close
    }
  } catch (e) {
    await close()
    throw e
  }
}
