/**
 * `flow()`: a DAG of tasks on the durable workflow engine, for code that does not write workflows.
 *
 * A flow is one execution of the workflow `effect-asynq:flow` whose payload is the DAG (node ids,
 * types, payloads, `dependsOn`, failure policy, timeout). Its body runs each node as an Activity
 * (`node:<id>`) as soon as the nodes it depends on are done, independent nodes at the same time;
 * a node is executed by the handler of its type registered in the process that runs the flow
 * worker (`flowWorker(handlers)`), and its JSON result is recorded before its dependents see it.
 * A run that dies replays: recorded nodes are not run again.
 *
 * Failure policies, per node (`onFailure`): `fail` (the default) fails the flow: the nodes already
 * running finish, the nodes not started never start; `ignore`: the dependents run without the
 * node's result; `continue`: the dependents run and see the failure. A handler that throws or
 * rejects fails its node; one that runs past the node's `timeoutMs` fails it too (its AbortSignal
 * fires): no flow waits forever on a node.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Activity from "effect/workflow/Activity"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import type { Broker } from "../broker/Broker.js"
import { InvalidArgument } from "../broker/errors.js"
import { readExecutionFields } from "../broker/workflowActivityDone.js"
import type { RedisError } from "../redis/errors.js"
import { controlQueueOf } from "../steps/workflowControl.js"
import { codecsOf, decodeExit } from "./codec.js"

/** The name of the workflow every flow is an execution of (its control queue is `<queue>:effect-asynq:flow`). */
export const flowWorkflowName = "effect-asynq:flow"

/** What a failing node does to its flow: `fail` the flow, `ignore` the failure (dependents run without the result), `continue` (dependents run and see the failure). */
export type FlowFailurePolicy = "fail" | "ignore" | "continue"

const policies: ReadonlyArray<FlowFailurePolicy> = ["fail", "ignore", "continue"]

/** A node's timeout when it gives none: 10 minutes (under a run's default timeout of 30). */
export const defaultNodeTimeoutMs = 600_000

/** The most nodes a flow may have (each is an activity of one execution, read by every replay). */
export const maxFlowNodes = 1000

/** One node of a flow. */
export interface FlowNode {
  /** The node's id, unique in the flow (non-empty, at most 200 characters). Dependents name it in `dependsOn` and find its result under it. */
  readonly id: string
  /** Which handler runs it: a key of the handlers given to the flow worker. */
  readonly type: string
  /** The handler's input (JSON: it is stored with the flow). Default null. */
  readonly payload?: unknown
  /** The ids of the nodes that must be done before this one runs (shared nodes allowed; no cycle). */
  readonly dependsOn?: ReadonlyArray<string> | undefined
  /** What this node's failure does to the flow (default `fail`). */
  readonly onFailure?: FlowFailurePolicy | undefined
  /** How long its handler may run before the node fails (ms, default 10 minutes). */
  readonly timeoutMs?: number | undefined
}

/** A flow to start: its nodes, and optionally its id (the same id is the same flow: starting it again starts nothing). */
export interface FlowSpec {
  /** The flow's id (non-empty, at most 256 characters). Default: a random UUID. */
  readonly id?: string | undefined
  /** The DAG (at least one node, at most 1,000). */
  readonly nodes: ReadonlyArray<FlowNode>
}

/** Why a flow was refused at creation (nothing was written). */
export type InvalidFlowReason =
  | "bad-id"
  | "empty"
  | "too-many-nodes"
  | "bad-node"
  | "duplicate-id"
  | "bad-policy"
  | "bad-timeout"
  | "bad-payload"
  | "unknown-dependency"
  | "cycle"

/** A flow refused at creation, with the reason and the node at fault (nothing was written). */
export class InvalidFlow extends Data.TaggedError("InvalidFlow")<{
  readonly reason: InvalidFlowReason
  /** The node at fault, when one is. */
  readonly node?: string | undefined
  readonly message: string
}> {}

/** No flow with this id (never started, or deleted). */
export class FlowNotFound extends Data.TaggedError("FlowNotFound")<{
  readonly flowId: string
  readonly message: string
}> {}

/** A flow ended in failure: a node under `fail` failed (`node` names it), or the flow was cancelled or crashed (`node` undefined). */
export class FlowFailed extends Data.TaggedError("FlowFailed")<{
  readonly flowId: string
  /** The node whose failure failed the flow; undefined when the flow was cancelled or its run crashed. */
  readonly node: string | undefined
  /** The failure. */
  readonly error: FlowNodeError
  /** What the nodes that ran gave (succeeded or failed), by node id. */
  readonly nodes: Readonly<Record<string, FlowNodeOutcome>>
  readonly message: string
}> {}

/** Waiting for a flow's result took longer than allowed (the flow goes on). */
export class FlowTimeout extends Data.TaggedError("FlowTimeout")<{
  readonly flowId: string
  readonly timeoutMs: number
  readonly message: string
}> {}

// --- stored shapes (the workflow's schemas) ------------------------------------------------------

const NodeErrorSchema = Schema.Struct({ name: Schema.String, message: Schema.String })

/** A node's failure as recorded: the name and message of what its handler threw (`NodeTimeout`, `NoHandler`, `ResultNotJson` for the flow's own). */
export type FlowNodeError = typeof NodeErrorSchema.Type

const NodeOutcomeSchema = Schema.Union([
  Schema.Struct({ status: Schema.Literal("succeeded"), result: Schema.Json }),
  Schema.Struct({ status: Schema.Literal("failed"), error: NodeErrorSchema })
])

/** What a node that ran gave: its JSON result, or its failure. */
export type FlowNodeOutcome = typeof NodeOutcomeSchema.Type

const NodeSpecSchema = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  payload: Schema.Json,
  dependsOn: Schema.Array(Schema.String),
  onFailure: Schema.Literals(["fail", "ignore", "continue"]),
  timeoutMs: Schema.Number
})

type NodeSpec = typeof NodeSpecSchema.Type

const FlowResultSchema = Schema.Struct({ nodes: Schema.Record(Schema.String, NodeOutcomeSchema) })

/** A flow that succeeded: every node's outcome by id (failed ones only under `ignore` or `continue`). */
export type FlowResult = typeof FlowResultSchema.Type

const FlowFailureSchema = Schema.Struct({
  _tag: Schema.tag("FlowNodeFailed"),
  node: Schema.String,
  error: NodeErrorSchema,
  nodes: Schema.Record(Schema.String, NodeOutcomeSchema)
})

/**
 * The workflow every flow is an execution of. Its payload is the validated DAG; its execution id
 * comes from the flow id. Register it with `flowWorker`; start flows with `startFlow`.
 */
export const flowWorkflow = Workflow.make(flowWorkflowName, {
  payload: { id: Schema.String, nodes: Schema.Array(NodeSpecSchema) },
  success: FlowResultSchema,
  error: FlowFailureSchema,
  idempotencyKey: ({ id }) => id
})

/** The engine's execution id of a flow id. */
export const flowExecutionId = (flowId: string): Effect.Effect<string> =>
  flowWorkflow.executionId({ id: flowId, nodes: [] })

// --- validation ------------------------------------------------------------------------------------

/** A value as JSON (what a dependent or a replay reads back), or undefined when it is not JSON (a BigInt, a cycle). */
const asJson = (value: unknown): Schema.Json | undefined => {
  try {
    const text = JSON.stringify(value === undefined ? null : value)
    return text === undefined ? null : (JSON.parse(text) as Schema.Json)
  } catch {
    return undefined
  }
}

const nodeName = (id: string) => JSON.stringify(id)

/** One cycle among the nodes Kahn's algorithm could not order (each of them depends on another of them). */
const findCycle = (
  left: ReadonlySet<string>,
  deps: ReadonlyMap<string, ReadonlyArray<string>>
): ReadonlyArray<string> => {
  const path: Array<string> = []
  const at = new Map<string, number>()
  let current = left.values().next().value as string
  while (!at.has(current)) {
    at.set(current, path.length)
    path.push(current)
    current = (deps.get(current) ?? []).find((d) => left.has(d)) as string
  }
  return [...path.slice(at.get(current)), current]
}

/**
 * Checks a flow and gives it in its stored form (defaults filled in, payloads as JSON, duplicate
 * dependencies dropped), or an InvalidFlow naming what is wrong: no nodes, too many, a duplicate
 * id, an unknown dependency, a cycle, a bad policy, timeout or payload.
 */
export const validateFlow = (spec: FlowSpec): Effect.Effect<typeof flowWorkflow.payloadSchema.Type, InvalidFlow> =>
  Effect.suspend(() => {
    const bad = (reason: InvalidFlowReason, message: string, node?: string) =>
      Effect.fail(new InvalidFlow({ reason, message: `flow: ${message}`, node }))
    if (typeof spec !== "object" || spec === null || !Array.isArray(spec.nodes))
      return bad("empty", "a flow needs `nodes`, an array of nodes")
    const id = spec.id ?? globalThis.crypto.randomUUID()
    if (typeof id !== "string" || id === "" || id.length > 256)
      return bad(
        "bad-id",
        `the flow id must be a non-empty string of at most 256 characters, got ${JSON.stringify(id)}`
      )
    if (spec.nodes.length === 0) return bad("empty", "a flow needs at least one node")
    if (spec.nodes.length > maxFlowNodes)
      return bad(
        "too-many-nodes",
        `a flow has at most ${maxFlowNodes} nodes, got ${spec.nodes.length}: split it into several flows`
      )
    const nodes: Array<NodeSpec> = []
    const seen = new Set<string>()
    for (const [i, n] of spec.nodes.entries()) {
      if (typeof n !== "object" || n === null) return bad("bad-node", `node #${i} is not an object`)
      if (typeof n.id !== "string" || n.id === "" || n.id.length > 200)
        return bad(
          "bad-node",
          `node #${i}: its id must be a non-empty string of at most 200 characters, got ${JSON.stringify(n.id)}`
        )
      if (seen.has(n.id)) return bad("duplicate-id", `two nodes have the id ${nodeName(n.id)}`, n.id)
      seen.add(n.id)
      if (typeof n.type !== "string" || n.type === "")
        return bad(
          "bad-node",
          `node ${nodeName(n.id)}: its type must be a non-empty string, got ${JSON.stringify(n.type)}`,
          n.id
        )
      const onFailure = n.onFailure ?? "fail"
      if (!policies.includes(onFailure))
        return bad(
          "bad-policy",
          `node ${nodeName(n.id)}: onFailure must be "fail", "ignore" or "continue", got ${JSON.stringify(onFailure)}`,
          n.id
        )
      const timeoutMs = n.timeoutMs ?? defaultNodeTimeoutMs
      if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 1)
        return bad(
          "bad-timeout",
          `node ${nodeName(n.id)}: timeoutMs must be a whole number of ms >= 1, got ${String(timeoutMs)}`,
          n.id
        )
      const payload = asJson(n.payload)
      if (payload === undefined)
        return bad("bad-payload", `node ${nodeName(n.id)}: its payload cannot be written as JSON`, n.id)
      const dependsOn = n.dependsOn ?? []
      if (!Array.isArray(dependsOn) || dependsOn.some((d) => typeof d !== "string"))
        return bad("bad-node", `node ${nodeName(n.id)}: dependsOn must be an array of node ids`, n.id)
      nodes.push({ id: n.id, type: n.type, payload, dependsOn: [...new Set(dependsOn)], onFailure, timeoutMs })
    }
    for (const n of nodes) {
      const unknown = n.dependsOn.find((d) => !seen.has(d))
      if (unknown !== undefined)
        return bad(
          "unknown-dependency",
          `node ${nodeName(n.id)} depends on ${nodeName(unknown)}, which is not a node of this flow`,
          n.id
        )
    }
    // Kahn's algorithm: what cannot be ordered is on a cycle or after one.
    const deps = new Map(nodes.map((n) => [n.id, n.dependsOn]))
    const dependents = new Map<string, Array<string>>()
    const waiting = new Map<string, number>()
    for (const n of nodes) {
      waiting.set(n.id, n.dependsOn.length)
      for (const d of n.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), n.id])
    }
    const ready = nodes.filter((n) => n.dependsOn.length === 0).map((n) => n.id)
    const left = new Set(seen)
    while (ready.length > 0) {
      const done = ready.pop() as string
      left.delete(done)
      for (const d of dependents.get(done) ?? []) {
        const w = (waiting.get(d) ?? 0) - 1
        waiting.set(d, w)
        if (w === 0) ready.push(d)
      }
    }
    if (left.size > 0) {
      const cycle = findCycle(left, deps)
      return bad(
        "cycle",
        `the nodes depend on each other in a cycle: ${cycle.map(nodeName).join(" → ")} (each depends on the next)`,
        cycle[0]
      )
    }
    return Effect.succeed({ id, nodes })
  })

// --- the worker side -------------------------------------------------------------------------------

/** What a node's handler gets besides its payload. */
export interface FlowNodeContext {
  /** The flow's id. */
  readonly flowId: string
  /** The node's id. */
  readonly nodeId: string
  /** The results of the nodes it depends on that succeeded, by node id. */
  readonly results: Readonly<Record<string, Schema.Json>>
  /** The failures of the nodes it depends on that failed under `continue`, by node id (a failure under `ignore` is in neither). */
  readonly failures: Readonly<Record<string, FlowNodeError>>
  /** Aborted when the node runs past its timeout or its run is stopped. */
  readonly signal: AbortSignal
}

/** Runs a node of one type: resolves to its result (JSON; undefined is null), throws or rejects to fail it. */
export type FlowNodeHandler = (payload: Schema.Json, context: FlowNodeContext) => unknown

/** The handlers of a flow worker, by node type. */
export type FlowHandlers = Readonly<Record<string, FlowNodeHandler>>

/** Options of the flow worker. */
export interface FlowWorkerOptions {
  /** Nodes of one flow whose handlers run at the same time in this process (default 10). */
  readonly nodeConcurrency?: number | undefined
}

class NodeFailure extends Data.TaggedError("NodeFailure")<{ readonly error: FlowNodeError }> {}

const errorOf = (thrown: unknown): FlowNodeError =>
  thrown instanceof Error
    ? { name: thrown.name, message: thrown.message }
    : {
        name: "Error",
        message:
          typeof thrown === "string" ? thrown : asJson(thrown) === undefined ? String(thrown) : JSON.stringify(thrown)
      }

/** Runs one node's handler (bounded by its timeout); never fails: a failure is the outcome. */
const runHandler = (
  handlers: FlowHandlers,
  flowId: string,
  node: NodeSpec,
  results: Record<string, Schema.Json>,
  failures: Record<string, FlowNodeError>
): Effect.Effect<FlowNodeOutcome> => {
  const handler = Object.hasOwn(handlers, node.type) ? handlers[node.type] : undefined
  if (handler === undefined) {
    return Effect.succeed<FlowNodeOutcome>({
      status: "failed",
      error: { name: "NoHandler", message: `no handler for node type ${JSON.stringify(node.type)} in this flow worker` }
    })
  }
  return Effect.tryPromise({
    try: (signal) =>
      Promise.resolve().then(() => handler(node.payload, { flowId, nodeId: node.id, results, failures, signal })),
    catch: (thrown) => new NodeFailure({ error: errorOf(thrown) })
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(node.timeoutMs),
      orElse: () =>
        Effect.fail(
          new NodeFailure({
            error: {
              name: "NodeTimeout",
              message: `node ${nodeName(node.id)} ran longer than its timeout of ${node.timeoutMs} ms`
            }
          })
        )
    }),
    Effect.flatMap((value) => {
      const result = asJson(value)
      return result === undefined
        ? Effect.fail(
            new NodeFailure({
              error: {
                name: "ResultNotJson",
                message: `node ${nodeName(node.id)}: its handler's result cannot be written as JSON`
              }
            })
          )
        : Effect.succeed<FlowNodeOutcome>({ status: "succeeded", result })
    }),
    Effect.catchTag("NodeFailure", (f) => Effect.succeed<FlowNodeOutcome>({ status: "failed", error: f.error }))
  )
}

/**
 * The body of a flow: each node runs (as the activity `node:<id>`) once all of its dependencies
 * are done, at most `nodeConcurrency` at a time. After a failure under `fail`, no node starts.
 */
const runFlow =
  (handlers: FlowHandlers, nodeConcurrency: number) => (payload: typeof flowWorkflow.payloadSchema.Type) =>
    Effect.gen(function* () {
      const byId = new Map(payload.nodes.map((n) => [n.id, n]))
      const permits = Semaphore.makeUnsafe(nodeConcurrency)
      const outcomes: Record<string, FlowNodeOutcome> = {}
      let failed: { readonly node: string; readonly error: FlowNodeError } | undefined
      const visits = new Map<string, Effect.Effect<void, never, WorkflowEngine | WorkflowInstance>>()
      const visit = (id: string) =>
        Effect.suspend(() => visits.get(id) as Effect.Effect<void, never, WorkflowEngine | WorkflowInstance>)
      for (const node of payload.nodes) {
        const once = yield* Effect.cached(
          Effect.gen(function* () {
            yield* Effect.forEach(node.dependsOn, visit, { concurrency: "unbounded", discard: true })
            if (failed) return
            // No failure under `fail` so far, so every dependency ran and has an outcome.
            const results: Record<string, Schema.Json> = {}
            const failures: Record<string, FlowNodeError> = {}
            for (const d of node.dependsOn) {
              const o = outcomes[d] as FlowNodeOutcome
              if (o.status === "succeeded") results[d] = o.result
              else if (byId.get(d)?.onFailure === "continue") failures[d] = o.error
            }
            const outcome = yield* permits.withPermits(1)(
              Effect.suspend(
                (): Effect.Effect<FlowNodeOutcome | undefined, never, WorkflowEngine | WorkflowInstance> =>
                  failed
                    ? Effect.succeed(undefined)
                    : Activity.make({
                        name: `node:${node.id}`,
                        success: NodeOutcomeSchema,
                        execute: runHandler(handlers, payload.id, node, results, failures)
                      })
              )
            )
            if (outcome === undefined) return
            outcomes[node.id] = outcome
            if (outcome.status === "failed" && node.onFailure === "fail")
              failed ??= { node: node.id, error: outcome.error }
          })
        )
        visits.set(node.id, once)
      }
      yield* Effect.forEach(payload.nodes, (n) => visit(n.id), { concurrency: "unbounded", discard: true })
      if (failed)
        return yield* Effect.fail({
          _tag: "FlowNodeFailed" as const,
          node: failed.node,
          error: failed.error,
          nodes: outcomes
        })
      return { nodes: outcomes }
    })

/**
 * Registers the flow workflow with the engine, with the handlers of its nodes: while this layer is
 * alive, this process runs flows (a worker on the control queue `<queue>:effect-asynq:flow`). A
 * node whose type has no handler here fails with `NoHandler`. Throws InvalidArgument for a bad
 * `nodeConcurrency`.
 */
export const flowWorker = (
  handlers: FlowHandlers,
  options: FlowWorkerOptions = {}
): Layer.Layer<never, never, WorkflowEngine> => {
  const nodeConcurrency = options.nodeConcurrency ?? 10
  if (!Number.isInteger(nodeConcurrency) || nodeConcurrency < 1) {
    throw new InvalidArgument({
      field: "nodeConcurrency",
      message: `flow worker: nodeConcurrency must be a positive integer, got ${nodeConcurrency}`
    })
  }
  return flowWorkflow.toLayer(runFlow(handlers, nodeConcurrency))
}

// --- starting, inspecting, awaiting ------------------------------------------------------------------

/** Where flows live: the same `queue` and `shards` as the engine layer's (defaults "workflow" and 1). */
export interface FlowQueueOptions {
  /** The engine layer's `queue` (default "workflow"). */
  readonly queue?: string | undefined
  /** The engine layer's `shards` (default 1). */
  readonly shards?: number | undefined
}

/**
 * Starts a flow (validated first: InvalidFlow, nothing written) and gives its id once the start is
 * recorded. The same id is the same flow: starting it again starts nothing, whatever nodes it
 * names (the first start's DAG stays).
 */
export const startFlow = Effect.fn("Flow.start")(function* (
  spec: FlowSpec
): Effect.fn.Return<string, InvalidFlow, WorkflowEngine> {
  const payload = yield* validateFlow(spec)
  yield* flowWorkflow.execute(payload, { discard: true })
  return payload.id
})

/** A node's state in `FlowStatus`: not run yet (waiting, running, or never to run), or its outcome. */
export type FlowNodeStatus = { readonly status: "waiting" } | FlowNodeOutcome

/** A flow's state: `running` until it has a result; then `succeeded`, `failed` or `cancelled`. */
export interface FlowStatus {
  readonly flowId: string
  readonly state: "running" | "succeeded" | "failed" | "cancelled"
  /** Each node's state, by id, in the order of the flow's nodes. */
  readonly nodes: Readonly<Record<string, FlowNodeStatus>>
  /** Why the flow failed (`failed` and `cancelled`): the node at fault, when one is, and its error. */
  readonly failure?: { readonly node: string | undefined; readonly error: FlowNodeError } | undefined
}

const cancelledError: FlowNodeError = { name: "Cancelled", message: "the flow was cancelled" }

/** The failure a flow's final exit records: a node's, a cancel, or a crash of its body. */
const failureOf = (
  cause: Cause.Cause<typeof FlowFailureSchema.Type>
): { readonly node: string | undefined; readonly error: FlowNodeError; readonly cancelled: boolean } => {
  const failed = cause.reasons.find(Cause.isFailReason)
  if (failed) return { node: failed.error.node, error: failed.error.error, cancelled: false }
  if (Cause.hasInterruptsOnly(cause)) return { node: undefined, error: cancelledError, cancelled: true }
  const died = cause.reasons.find(Cause.isDieReason)
  return {
    node: undefined,
    error: died ? errorOf(died.defect) : { name: "Error", message: Cause.pretty(cause) },
    cancelled: false
  }
}

const resolveQueues = (o: FlowQueueOptions) => ({ queue: o.queue ?? "workflow", shards: o.shards ?? 1 })

/** The stored state of a flow: its payload and, once it ended, its final exit (FlowNotFound for an unknown id). */
const readFlow = (flowId: string, options: FlowQueueOptions) =>
  Effect.gen(function* () {
    const executionId = yield* flowExecutionId(flowId)
    const queue = controlQueueOf(resolveQueues(options), flowWorkflowName, executionId)
    const [state, payloadJson, resultJson] = yield* readExecutionFields(queue, executionId, [
      "state",
      "payload",
      "result"
    ])
    if (state === undefined || payloadJson === undefined)
      return yield* new FlowNotFound({ flowId, message: `no flow with id ${JSON.stringify(flowId)}` })
    const codecs = codecsOf(flowWorkflow)
    const payload = (yield* codecs.decodePayload(payloadJson)) as typeof flowWorkflow.payloadSchema.Type
    let exit: Exit.Exit<FlowResult, typeof FlowFailureSchema.Type> | undefined
    if (state === "complete" && resultJson !== undefined) {
      const result = yield* codecs.decodeResult(resultJson)
      if (result._tag === "Complete") exit = result.exit as Exit.Exit<FlowResult, typeof FlowFailureSchema.Type>
    }
    return { executionId, queue, payload, exit }
  })

/**
 * A flow's state and each node's (two reads of its execution hash). FlowNotFound for an unknown id;
 * pass the engine layer's `queue` and `shards` if you changed them.
 */
export const flowStatus = Effect.fn("Flow.status")(function* (
  flowId: string,
  options: FlowQueueOptions = {}
): Effect.fn.Return<FlowStatus, FlowNotFound | RedisError, Broker> {
  const { executionId, queue, payload, exit } = yield* readFlow(flowId, options)
  const stored = yield* readExecutionFields(
    queue,
    executionId,
    payload.nodes.map((n) => `a:node:${n.id}/1`)
  )
  const nodes: Record<string, FlowNodeStatus> = {}
  for (const [i, n] of payload.nodes.entries()) {
    const json = stored[i]
    const recorded = json === undefined ? undefined : yield* decodeExit(json)
    nodes[n.id] =
      recorded !== undefined && Exit.isSuccess(recorded) ? (recorded.value as FlowNodeOutcome) : { status: "waiting" }
  }
  if (exit === undefined) return { flowId, state: "running", nodes }
  if (Exit.isSuccess(exit)) return { flowId, state: "succeeded", nodes }
  const { node, error, cancelled } = failureOf(exit.cause)
  return { flowId, state: cancelled ? "cancelled" : "failed", nodes, failure: { node, error } }
})

/** Options of `awaitFlow`. */
export interface AwaitFlowOptions extends FlowQueueOptions {
  /** How long to wait for the result (ms, default 5 minutes); past it, FlowTimeout (the flow goes on). */
  readonly timeoutMs?: number | undefined
}

/** How long `awaitFlow` waits by default: 5 minutes. */
export const defaultAwaitFlowTimeoutMs = 300_000

/**
 * Waits for a flow's result: its nodes' outcomes when it succeeded; FlowFailed when a node under
 * `fail` failed, or it was cancelled; FlowNotFound for an unknown id; FlowTimeout past `timeoutMs`
 * (default 5 minutes). A completion is seen at once (Redis pub/sub), a poll backs it up.
 */
export const awaitFlow = Effect.fn("Flow.await")(function* (
  flowId: string,
  options: AwaitFlowOptions = {}
): Effect.fn.Return<FlowResult, FlowFailed | FlowNotFound | FlowTimeout | RedisError, Broker | WorkflowEngine> {
  const timeoutMs = options.timeoutMs ?? defaultAwaitFlowTimeoutMs
  const read = yield* readFlow(flowId, options)
  // The flow exists, so executing its stored payload again starts nothing: it waits for the result.
  const exit =
    read.exit ??
    (yield* Effect.exit(flowWorkflow.execute(read.payload)).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () =>
          Effect.fail(
            new FlowTimeout({
              flowId,
              timeoutMs,
              message: `flow ${JSON.stringify(flowId)} has no result after ${timeoutMs} ms`
            })
          )
      })
    ))
  if (Exit.isSuccess(exit)) return exit.value
  const { node, error } = failureOf(exit.cause)
  const nodes = exit.cause.reasons.find(Cause.isFailReason)?.error.nodes ?? {}
  const why =
    node === undefined
      ? `${error.name}: ${error.message}`
      : `node ${nodeName(node)} failed: ${error.name}: ${error.message}`
  return yield* new FlowFailed({ flowId, node, error, nodes, message: `flow ${JSON.stringify(flowId)} failed: ${why}` })
})

/**
 * Cancels a flow: no node starts any more, the nodes running finish, and the flow ends `cancelled`.
 * Does nothing to a flow that has ended; FlowNotFound for an unknown id.
 */
export const cancelFlow = Effect.fn("Flow.cancel")(function* (
  flowId: string,
  options: FlowQueueOptions = {}
): Effect.fn.Return<void, FlowNotFound | RedisError, Broker | WorkflowEngine> {
  const { executionId, exit } = yield* readFlow(flowId, options)
  if (exit === undefined) yield* flowWorkflow.interrupt(executionId)
})
