/**
 * AWS Lambda dispatcher (EventBridge schedule, or triggered on enqueue): reads queue depths and
 * starts processor invocations (InvocationType "Event") for the backlog, up to a concurrency cap.
 * A dispatch with failed Invoke calls (throttled, timed out, refused) fails the invocation, so it
 * shows in the function's Errors metric.
 */
import type { LambdaClient, LambdaClientConfig } from "@aws-sdk/client-lambda"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { invocationBudget, makeBrokerRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import {
  dispatch,
  type DispatchConfig,
  dispatchConfigProblem,
  DispatchFailed,
  type DispatchSummary
} from "./dispatch.js"
import { importLambdaSdk } from "./lambdaSdk.js"
import type { LambdaContext } from "./types.js"

export { DispatchFailed } from "./dispatch.js"

/** Settings of `createDispatcherHandler`: the dispatch settings, plus whether a failed Invoke fails the invocation. */
export interface DispatcherHandlerConfig extends DispatchConfig {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
  /** A Lambda client, or the config to build one (default: region and credentials from the environment). */
  readonly lambda?: LambdaClient | LambdaClientConfig
  /**
   * Throw (so Lambda counts an error, and the Errors metric and alarms see it) when an Invoke call
   * failed: throttled, timed out or refused (default true). With false the summary is returned.
   */
  readonly failOnError?: boolean
  /** Where the summary line goes (default console.log). */
  readonly log?: (line: string) => void
}

/** The scheduled Lambda handler that reads queue depths and invokes processors (made by `createDispatcherHandler`). */
export interface DispatcherHandler {
  /** One dispatch: reads the depths, invokes the processors it wants, and returns (and logs) the summary; throws `DispatchFailed` when an Invoke call failed, unless `failOnError` is false. */
  (event?: unknown, context?: LambdaContext): Promise<DispatchSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** A client has `send`; a LambdaClientConfig has none (duck-typed: the app's SDK copy may not be the one we would import). */
const isLambdaClient = (lambda: LambdaClient | LambdaClientConfig): lambda is LambdaClient =>
  typeof (lambda as { readonly send?: unknown }).send === "function"

/**
 * Without a client in `config.lambda`, @aws-sdk/client-lambda is imported and the client built as
 * the handler is created (during the cold start); when the package is not installed, every
 * invocation rejects with MissingPeerDependency saying so. A misconfigured dispatcher throws
 * InvalidArgument when created (at cold start), not on every schedule tick.
 */
export const createDispatcherHandler = (config: DispatcherHandlerConfig): DispatcherHandler => {
  const problem = dispatchConfigProblem(config)
  if (problem !== undefined) throw problem
  const runtime = makeBrokerRuntime(config.redis)
  const log = config.log ?? ((line: string) => console.log(line))
  const given = config.lambda ?? {}
  const lambda: Promise<LambdaClient> = isLambdaClient(given)
    ? Promise.resolve(given)
    : importLambdaSdk("effect-asynq/aws-lambda/dispatcherHandler").then((sdk) => new sdk.LambdaClient(given))
  lambda.catch(() => undefined) // reported by each invocation, not as an unhandled rejection
  const handler = async (_event?: unknown, context?: LambdaContext) => {
    const client = await lambda
    const remainingMs = context?.getRemainingTimeInMillis()
    // The Invoke calls end by the budget (remaining time less a reserve); the whole run, Redis
    // included, is cut a little later, so a slow Invoke is reported as such, not as a stalled run.
    const invokeBudgetMs = remainingMs === undefined ? undefined : invocationBudget(remainingMs)
    const summary = await runtime.run(
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        dispatch(config, client, invokeBudgetMs === undefined ? undefined : now + invokeBudgetMs)
      ),
      {
        budgetMs:
          remainingMs === undefined || invokeBudgetMs === undefined ? undefined : (remainingMs + invokeBudgetMs) / 2
      }
    )
    log(JSON.stringify({ msg: "effect-asynq dispatch", ...summary, depths: undefined }))
    if (summary.failures.length > 0 && config.failOnError !== false)
      throw new DispatchFailed({
        summary,
        message:
          `dispatch: ${summary.failures.length} of ${summary.invoked + summary.failures.length} processor invocation(s) failed ` +
          `(${summary.throttled} throttled, ${summary.timedOut} timed out): ${summary.failures.slice(0, 3).join("; ")}`
      })
    return summary
  }
  return Object.assign(handler, { runtime })
}
