import type { LambdaClient } from "@aws-sdk/client-lambda"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../../src/broker/errors.js"
import { queueDepths, type QueueDepth } from "../../src/broker/queueDepths.js"
import { lambdaSdk } from "./lambdaSdk.js"

/**
 * When to invoke Lambda processors at all (a hybrid fleet: long-lived workers take the steady load,
 * Lambda only the overflow). Invocations start when the backlog is above `backlog`, or when the
 * oldest pending task has waited longer than `oldestPendingAgeMs` (either threshold may be left out).
 */
export interface SpilloverThreshold {
  /** Pending tasks (over all the queues) the long-lived workers are left with; only the excess is dispatched. */
  readonly backlog?: number
  /** Dispatch (at least one invocation) once the oldest pending task has waited longer than this. */
  readonly oldestPendingAgeMs?: number
}

/** What the dispatcher looks at and how many processor invocations it may start. */
export interface DispatchConfig {
  /** Queues to look at (their pending depth is summed). */
  readonly queues: ReadonlyArray<string>
  /** The processor function to invoke (name, ARN or name:alias). */
  readonly processorFunctionName: string
  /** Most processor invocations started by one dispatch (default 10). */
  readonly maxConcurrency?: number
  /** Tasks one processor invocation is expected to take on (default 10). */
  readonly tasksPerInvocation?: number
  /** Only invoke processors past these thresholds (see SpilloverThreshold). Default: any backlog. */
  readonly spilloverAbove?: SpilloverThreshold
  /**
   * Longest wait for one Invoke call, the SDK's retries included (default 5000 ms; never more
   * than the time the dispatch has). A call still unanswered then is aborted and counted as failed.
   */
  readonly requestTimeoutMs?: number
}

/** One Invoke call that did not start a processor. */
export interface DispatchFailure {
  /** "throttled": Lambda refused for rate or concurrency (429, TooManyRequestsException…); "timeout": no answer in time. */
  readonly kind: "throttled" | "timeout" | "error"
  readonly message: string
}

/** What one dispatch did. */
export interface DispatchSummary {
  readonly depths: ReadonlyArray<QueueDepth>
  readonly backlog: number
  /** The oldest pending task's age in ms when `spilloverAbove.oldestPendingAgeMs` is set (else undefined). */
  readonly oldestPendingAgeMs: number | undefined
  /** Invocations the backlog called for, before the concurrency cap. */
  readonly wanted: number
  /** Invocations accepted by Lambda (InvocationType "Event"). */
  readonly invoked: number
  /** Of the failures, how many were throttled and how many timed out. */
  readonly throttled: number
  readonly timedOut: number
  /** Why each failed Invoke failed (messages). */
  readonly failures: ReadonlyArray<string>
}

/** The event each dispatched processor invocation receives. */
export interface DrainEvent {
  readonly source: "effect-asynq.dispatcher"
  readonly queues: ReadonlyArray<string>
}

/** A dispatch some of whose Invoke calls failed (throttled, timed out or refused): the handler throws it. */
export class DispatchFailed extends Data.TaggedError("DispatchFailed")<{
  readonly summary: DispatchSummary
  readonly message: string
}> {}

/** How many processor invocations a backlog needs: ceil(backlog / per), at most `max`. */
export const invocationsFor = (backlog: number, per: number, max: number): number =>
  backlog <= 0 ? 0 : Math.min(max, Math.ceil(backlog / Math.max(1, per)))

/** The setting checks shared by the dispatcher factory and `dispatch` (a bad value is an InvalidArgument). */
export const dispatchConfigProblem = (config: DispatchConfig): InvalidArgument | undefined => {
  const bad = (field: string, problem: string) => new InvalidArgument({ field, message: `dispatcher: ${problem}` })
  if (typeof config.processorFunctionName !== "string" || config.processorFunctionName.trim() === "")
    return bad(
      "processorFunctionName",
      "processorFunctionName is empty; set it to the processor function's name or ARN (is its environment variable defined?)"
    )
  if (!Array.isArray(config.queues) || config.queues.length === 0)
    return bad("queues", "queues must list at least one queue")
  for (const field of ["maxConcurrency", "tasksPerInvocation", "requestTimeoutMs"] as const) {
    const v = config[field]
    if (v !== undefined && !(Number.isInteger(v) && v >= 1))
      return bad(field, `${field} must be a whole number >= 1, got ${v}`)
  }
  const s = config.spilloverAbove
  if (s !== undefined) {
    if (s.backlog === undefined && s.oldestPendingAgeMs === undefined)
      return bad("spilloverAbove", "spilloverAbove needs backlog, oldestPendingAgeMs or both")
    for (const field of ["backlog", "oldestPendingAgeMs"] as const) {
      const v = s[field]
      if (v !== undefined && !(Number.isInteger(v) && v >= 0))
        return bad(`spilloverAbove.${field}`, `spilloverAbove.${field} must be a whole number >= 0, got ${v}`)
    }
  }
  return undefined
}

const throttleNames = new Set([
  "TooManyRequestsException",
  "ThrottlingException",
  "Throttling",
  "EC2ThrottledException",
  "ProvisionedThroughputExceededException"
])

/** Sorts an Invoke failure: throttling (by name or HTTP 429), or anything else. */
const failureOf = (cause: unknown): DispatchFailure => {
  const e = cause as {
    readonly name?: unknown
    readonly message?: unknown
    readonly $metadata?: { readonly httpStatusCode?: number }
  } | null
  const name = typeof e?.name === "string" ? e.name : ""
  const message = typeof e?.message === "string" ? e.message : String(cause)
  const throttled = throttleNames.has(name) || e?.$metadata?.httpStatusCode === 429
  return { kind: throttled ? "throttled" : "error", message: `${name || "Error"}: ${message}` }
}

/** How many invocations the depths call for, given the spillover thresholds. */
const wantedFor = (config: DispatchConfig, backlog: number, oldestAgeMs: number | undefined): number => {
  const per = Math.max(1, config.tasksPerInvocation ?? 10)
  const s = config.spilloverAbove
  if (s === undefined) return backlog <= 0 ? 0 : Math.ceil(backlog / per)
  const excess = s.backlog === undefined ? 0 : backlog - s.backlog
  const tooOld = s.oldestPendingAgeMs !== undefined && oldestAgeMs !== undefined && oldestAgeMs > s.oldestPendingAgeMs
  if (excess > 0) return Math.ceil(excess / per)
  return tooOld && backlog > 0 ? 1 : 0
}

/**
 * Reads the queue depths and invokes the processor asynchronously as many times as the backlog
 * needs (or, with `spilloverAbove`, only the overflow). Every Invoke call is bounded: by
 * `requestTimeoutMs` and by `deadlineMs` (a time on Effect's Clock, e.g. now + the invocation's
 * remaining time less a reserve), whichever comes first; a call still unanswered then is aborted.
 * Returns a summary that counts throttled, timed-out and refused calls (see DispatchFailed for the
 * handler that turns them into a failed invocation). Fails with MissingPeerDependency when
 * @aws-sdk/client-lambda is not installed.
 */
export const dispatch = Effect.fn("Lambda.dispatch")(function* (
  config: DispatchConfig,
  lambda: LambdaClient,
  deadlineMs?: number
) {
  const problem = dispatchConfigProblem(config)
  if (problem !== undefined) return yield* problem
  const { InvokeCommand } = yield* lambdaSdk("effect-asynq/aws-lambda/dispatch")
  const byAge = config.spilloverAbove?.oldestPendingAgeMs !== undefined
  const depths = yield* queueDepths(config.queues, { oldestAge: byAge })
  const backlog = depths.reduce((n, d) => n + d.pending, 0)
  const now = yield* Clock.currentTimeMillis
  const oldestSince = depths.reduce<number | undefined>(
    (min, d) =>
      d.oldestPendingSinceMs === undefined
        ? min
        : min === undefined
          ? d.oldestPendingSinceMs
          : Math.min(min, d.oldestPendingSinceMs),
    undefined
  )
  const oldestPendingAgeMs = byAge && oldestSince !== undefined ? Math.max(0, now - oldestSince) : undefined
  const wanted = wantedFor(config, backlog, oldestPendingAgeMs)
  const count = Math.min(config.maxConcurrency ?? 10, wanted)
  const event: DrainEvent = { source: "effect-asynq.dispatcher", queues: config.queues }
  const payload = new TextEncoder().encode(JSON.stringify(event))
  const timeoutMs = Math.max(
    0,
    Math.min(config.requestTimeoutMs ?? 5000, deadlineMs === undefined ? Infinity : deadlineMs - now)
  )
  const results = yield* Effect.forEach(
    Array.from({ length: count }),
    () =>
      Effect.tryPromise({
        try: (signal) =>
          lambda.send(
            new InvokeCommand({
              FunctionName: config.processorFunctionName,
              InvocationType: "Event",
              Payload: payload
            }),
            { abortSignal: signal }
          ),
        catch: failureOf
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(timeoutMs),
          orElse: () =>
            Effect.fail<DispatchFailure>({ kind: "timeout", message: `Invoke did not answer within ${timeoutMs} ms` })
        }),
        Effect.map((out): DispatchFailure | undefined =>
          out.StatusCode === 202
            ? undefined
            : { kind: "error", message: `unexpected status ${out.StatusCode ?? "none"}` }
        ),
        Effect.catch((f) => Effect.succeed(f))
      ),
    { concurrency: "unbounded" }
  )
  const failed = results.filter((r): r is DispatchFailure => r !== undefined)
  const summary: DispatchSummary = {
    depths,
    backlog,
    oldestPendingAgeMs,
    wanted,
    invoked: count - failed.length,
    throttled: failed.filter((f) => f.kind === "throttled").length,
    timedOut: failed.filter((f) => f.kind === "timeout").length,
    failures: failed.map((f) => f.message)
  }
  return summary
})
