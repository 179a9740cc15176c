/**
 * `flow()` for code that does not use Effect: `createFlowClient` starts flows and gives handles to
 * await (`result()`) or inspect (`status()`) them by id; `runFlowWorker` runs them with a record
 * of node handlers (type → async function), like runWorker's handlers. Both connect on their own
 * (Redis from `redis`, else REDIS_URL, else localhost) and reject with the typed errors of
 * src/workflow/flow.ts (each has `_tag` and `message`).
 */
import * as Layer from "effect/Layer"
import type { LogLevel } from "effect/LogLevel"
import * as References from "effect/References"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { Broker } from "../broker/Broker.js"
import type { RedisOptions } from "../redis/options.js"
import { brokerLayer, makePromiseRuntime, type PromiseRuntime } from "../runtime/promiseRuntime.js"
import { make, type WorkflowLayerOptions } from "./engine.js"
import {
  awaitFlow,
  cancelFlow,
  type FlowHandlers,
  type FlowQueueOptions,
  type FlowResult,
  type FlowSpec,
  type FlowStatus,
  type FlowWorkerOptions,
  flowStatus,
  flowWorker,
  startFlow
} from "./flow.js"

/** A started flow, by id: await its result, read its state, cancel it. */
export interface FlowHandle {
  /** The flow's id. */
  readonly id: string
  /**
   * Its result once it ends: every node's outcome when it succeeded. Rejects with FlowFailed (a node
   * under `fail` failed, or the flow was cancelled), FlowNotFound, or FlowTimeout past `timeoutMs`
   * (default 5 minutes; the flow goes on).
   */
  readonly result: (options?: { readonly timeoutMs?: number | undefined }) => Promise<FlowResult>
  /** Its state now and each node's (`waiting`, `succeeded`, `failed`). Rejects with FlowNotFound. */
  readonly status: () => Promise<FlowStatus>
  /** Cancels it: no node starts any more, and it ends `cancelled` (nothing for a flow that has ended). Rejects with FlowNotFound. */
  readonly cancel: () => Promise<void>
}

/** Starts flows and finds them by id. */
export interface FlowClient {
  /**
   * Starts a flow and resolves, once its start is recorded, to its handle. Rejects with InvalidFlow
   * (nothing written) for a flow with no nodes, a duplicate id, an unknown dependency, a cycle, a
   * bad policy, timeout or payload. The same `id` is the same flow: starting it again starts nothing.
   */
  readonly flow: (spec: FlowSpec) => Promise<FlowHandle>
  /** The handle of a flow by its id (nothing is read until you call it). */
  readonly get: (flowId: string) => FlowHandle
  /** Closes the connections (idempotent). */
  readonly close: () => Promise<void>
}

/** Options of `createFlowClient`: where Redis is, and the engine layer's `queue` and `shards` if you changed them. */
export interface FlowClientOptions extends FlowQueueOptions {
  /** Redis (a URL or RedisOptions); default REDIS_URL, else redis://127.0.0.1:6379. */
  readonly redis?: RedisOptions | string | undefined
}

/** Options of `runFlowWorker`. */
export interface RunFlowWorkerOptions extends FlowClientOptions, FlowWorkerOptions {
  /** Flows run at the same time by this process (default 10). */
  readonly concurrency?: number | undefined
  /** The least severe log level printed (default "Info"). */
  readonly logLevel?: LogLevel | undefined
  /** More options of the engine's worker (`runMaxRetry`, `runTimeoutSec`, `completedRetentionMs`, `server`). */
  readonly engine?: Omit<WorkflowLayerOptions, "queue" | "shards" | "concurrency"> | undefined
}

/** A flow worker that is also a client; `close()` stops it (the flows it runs are taken up again by a worker later). */
export type FlowWorker = FlowClient

type Services = WorkflowEngine.WorkflowEngine | Broker

const clientOver = (runtime: PromiseRuntime<Services>, queues: FlowQueueOptions): FlowClient => {
  const handle = (id: string): FlowHandle => ({
    id,
    result: (options = {}) => runtime.run(awaitFlow(id, { ...queues, timeoutMs: options.timeoutMs })),
    status: () => runtime.run(flowStatus(id, queues)),
    cancel: () => runtime.run(cancelFlow(id, queues))
  })
  return {
    flow: (spec) => runtime.run(startFlow(spec)).then(handle),
    get: handle,
    close: runtime.close
  }
}

/** The engine (with no workflow registered) and the Broker it runs on, both in the output: the handles read flows through the Broker. */
const engineLayer = (options: RunFlowWorkerOptions) =>
  Layer.effect(
    WorkflowEngine.WorkflowEngine,
    make({ ...options.engine, queue: options.queue, shards: options.shards, concurrency: options.concurrency })
  ).pipe(Layer.provideMerge(brokerLayer(options.redis)))

/**
 * A client that starts flows and finds them by id. It connects on the first call; it runs no
 * flows (a process with `runFlowWorker` does).
 */
export const createFlowClient = (options: FlowClientOptions = {}): FlowClient =>
  clientOver(makePromiseRuntime<Services, unknown>(engineLayer(options)), {
    queue: options.queue,
    shards: options.shards
  })

/**
 * Runs flows in this process with `handlers` (node type → function of the node's payload and
 * context, resolving to its JSON result; a throw or rejection fails the node) until `close()`.
 * Resolves once the worker is up; rejects when Redis cannot be reached or an option is bad. The
 * worker is also a client (`flow`, `get`).
 */
export const runFlowWorker = async (
  handlers: FlowHandlers,
  options: RunFlowWorkerOptions = {}
): Promise<FlowWorker> => {
  const { nodeConcurrency } = options
  const registration = flowWorker(handlers, { nodeConcurrency })
  const logging = Layer.succeed(References.MinimumLogLevel, options.logLevel ?? "Info")
  const runtime = makePromiseRuntime<Services, unknown>(
    registration.pipe(Layer.provideMerge(engineLayer(options)), Layer.provide(logging))
  )
  await runtime.open()
  return clientOver(runtime, { queue: options.queue, shards: options.shards })
}
