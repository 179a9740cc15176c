/**
 * AWS Lambda maintenance tick (EventBridge schedule, e.g. every minute): forward, recover,
 * aggregate, janitor over the configured queues; returns (and logs) a JSON summary.
 */
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import type { MaintenanceConfig, TickSummary } from "../../src/processor/maintenance.js"
import { type TickStayOption, tickWithStay } from "../shared/tickStay.js"
import { invocationBudget, makeBrokerRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import type { LambdaContext } from "./types.js"

/** Settings of `createTickHandler`: the maintenance tick's settings and where Redis is. */
export interface TickHandlerConfig extends MaintenanceConfig, TickStayOption {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
  /** Throw (so Lambda counts an error and EventBridge may retry) when a step failed (default true). */
  readonly failOnError?: boolean
  /** Where the summary line goes (default console.log). */
  readonly log?: (line: string) => void
}

/** The scheduled Lambda handler that runs one maintenance tick (made by `createTickHandler`). */
export interface TickHandler {
  /** Runs one bounded pass of forward, recover, aggregate and janitor (and `extra`), returns and logs the summary, and throws when a step failed. */
  (event?: unknown, context?: LambdaContext): Promise<TickSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** A tick summary with failed steps. */
export class TickFailed extends Error {
  constructor(readonly summary: TickSummary) {
    super(`maintenance tick: ${summary.errors.map((e) => `${e.step}: ${e.message}`).join("; ")}`)
    this.name = "TickFailed"
  }
}

/** Makes the maintenance tick's Lambda handler (for an EventBridge schedule). Create it at module scope: warm invocations reuse its Redis connection. */
export const createTickHandler = (config: TickHandlerConfig): TickHandler => {
  const runtime = makeBrokerRuntime(config.redis)
  const log = config.log ?? ((line: string) => console.log(line))
  const handler = async (_event?: unknown, context?: LambdaContext): Promise<TickSummary> => {
    const budgetMs = context === undefined ? undefined : invocationBudget(context.getRemainingTimeInMillis())
    const summary = await runtime.run(tickWithStay(config, budgetMs), { budgetMs })
    log(JSON.stringify({ msg: "effect-asynq maintenance tick", ...summary }))
    if (summary.errors.length > 0 && config.failOnError !== false) throw new TickFailed(summary)
    return summary
  }
  return Object.assign(handler, { runtime })
}
