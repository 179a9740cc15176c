import type { LambdaClient } from "@aws-sdk/client-lambda"
import * as Effect from "effect/Effect"
import { queueDepths, type QueueDepth } from "../../src/broker/queueDepths.js"
import { lambdaSdk } from "./lambdaSdk.js"

export interface DispatchConfig {
  /** Queues to look at (their pending depth is summed). */
  readonly queues: ReadonlyArray<string>
  /** The processor function to invoke (name, ARN or name:alias). */
  readonly processorFunctionName: string
  /** Most processor invocations started by one dispatch (default 10). */
  readonly maxConcurrency?: number
  /** Tasks one processor invocation is expected to take on (default 10). */
  readonly tasksPerInvocation?: number
}

/** What one dispatch did. */
export interface DispatchSummary {
  readonly depths: ReadonlyArray<QueueDepth>
  readonly backlog: number
  /** Invocations the backlog called for, before the concurrency cap. */
  readonly wanted: number
  /** Invocations accepted by Lambda (InvocationType "Event"). */
  readonly invoked: number
  readonly failures: ReadonlyArray<string>
}

/** The event each dispatched processor invocation receives. */
export interface DrainEvent {
  readonly source: "effect-asynq.dispatcher"
  readonly queues: ReadonlyArray<string>
}

/** How many processor invocations a backlog needs: ceil(backlog / per), at most `max`. */
export const invocationsFor = (backlog: number, per: number, max: number): number =>
  backlog <= 0 ? 0 : Math.min(max, Math.ceil(backlog / Math.max(1, per)))

/**
 * Reads the queue depths and invokes the processor asynchronously as many times as the backlog
 * needs. Fails with MissingPeerDependency when @aws-sdk/client-lambda is not installed.
 */
export const dispatch = Effect.fn("Lambda.dispatch")(function* (config: DispatchConfig, lambda: LambdaClient) {
  const { InvokeCommand } = yield* lambdaSdk("effect-asynq/aws-lambda/dispatch")
  const depths = yield* queueDepths(config.queues)
  const backlog = depths.reduce((n, d) => n + d.pending, 0)
  const per = config.tasksPerInvocation ?? 10
  const wanted = backlog <= 0 ? 0 : Math.ceil(backlog / Math.max(1, per))
  const count = invocationsFor(backlog, per, config.maxConcurrency ?? 10)
  const event: DrainEvent = { source: "effect-asynq.dispatcher", queues: config.queues }
  const payload = new TextEncoder().encode(JSON.stringify(event))
  const results = yield* Effect.forEach(
    Array.from({ length: count }),
    () =>
      Effect.tryPromise(() =>
        lambda.send(new InvokeCommand({ FunctionName: config.processorFunctionName, InvocationType: "Event", Payload: payload }))
      ).pipe(
        Effect.map((out) => (out.StatusCode === 202 ? undefined : `unexpected status ${out.StatusCode ?? "none"}`)),
        Effect.catch((e) => Effect.succeed(e.cause instanceof Error ? e.cause.message : String(e.cause)))
      ),
    { concurrency: "unbounded" }
  )
  const failures = results.filter((r): r is string => r !== undefined)
  const summary: DispatchSummary = { depths, backlog, wanted, invoked: count - failures.length, failures }
  return summary
})
