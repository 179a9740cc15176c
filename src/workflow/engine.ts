/**
 * The durable `WorkflowEngine` on asynq's Redis: effect's `WorkflowEngine.Encoded` contract, with
 * every piece of an execution's state in one hash on the execution's control queue
 * (`asynq:{q}:wf:x:<execution id>`) and every state transition one Lua script in that queue's slot.
 *
 * - A run (a replay of the workflow from the top) is an ordinary asynq task of type
 *   `effect-asynq:wf:run` on the control queue, so leases, retries, recovery, the CLI and asynqmon
 *   apply. An execution has at most one run task at a time (the hash's `task` field).
 * - The run begins with `workflowRunStart` (which hands it the whole hash: replayed activities and
 *   deferreds are read from it without a round trip) and ends with `workflowRunEnd`. A wake
 *   (`workflowWake`: a deferred's exit, a resume, a child's completion) that lands while the run
 *   goes sets the wake flag, which `workflowRunEnd` consumes in the same script as the suspension:
 *   the next run is enqueued, so no wake is lost. Wakes while a run is pending coalesce into it.
 * - An activity runs in the run's process; its exit is stored (`workflowActivityDone`, first write
 *   wins) before it is returned, and every replay reads the stored exit.
 *
 * Control queues: a workflow's runs go to `<queue>:<workflow name>`, or with `shards` > 1 to
 * `<queue>:<workflow name>#<n>`, n from a hash of the execution id (spreading executions over
 * Redis Cluster slots; every process must use the same `queue` and `shards`).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as Activity from "effect/workflow/Activity"
import type * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import { TokenParsed } from "effect/workflow/DurableDeferred"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { Broker } from "../broker/Broker.js"
import { registerQueueScript } from "../broker/enqueue.js"
import { InvalidArgument } from "../broker/errors.js"
import type { ScriptDef } from "../broker/script.js"
import { subscribeChannels } from "../broker/subscribe.js"
import { readExecutionFields, workflowActivityDoneScript } from "../broker/workflowActivityDone.js"
import { workflowRunEndScript } from "../broker/workflowRunEnd.js"
import { workflowRunStartScript } from "../broker/workflowRunStart.js"
import { workflowScheduleClockScript } from "../broker/workflowScheduleClock.js"
import { workflowStartScript } from "../broker/workflowStart.js"
import { SkipRetry } from "../processor/errors.js"
import type { Task } from "../processor/Task.js"
import * as Server from "../processor/Server.js"
import type { ServerOptions } from "../processor/options.js"
import {
  controlMessageOf,
  controlQueueOf,
  controlQueues,
  nextRunOf,
  wakeExecution,
  workflowDeferredTaskType,
  workflowRunTaskType
} from "../steps/workflowControl.js"
import { workflowDoneChannel, workflowInterruptChannel } from "../wire/workflowKeys.js"
import type { RedisConnectionError, RedisError } from "../redis/errors.js"
import { publishWorkflowInterrupt } from "../broker/workflowNotices.js"
import { activityCodecsOf, codecsOf, decodeExit, decodeExitText, encodeExit, encodeExitText } from "./codec.js"
import { type WorkflowCap, WorkflowCapExceeded, type RemoteStepFailed } from "./errors.js"
import { engineExtras, type RemoteDispatch } from "./internal.js"
import { remoteCheckTaskType, remoteControlQueueHeader, remoteTaskId, remoteTokenHeader } from "./remoteStep.js"
import { outstandingRemoteSteps, stopRemoteTask } from "./remoteStop.js"
import { Version } from "./version.js"
import { readRemoteTask, workflowRemoteScheduleScript } from "../broker/workflowRemote.js"
import { enqueue } from "../steps/enqueue.js"
import { decodeTaskMessage } from "../wire/TaskMessage.js"

export { controlQueueOf, controlQueues, wakeExecution, workflowDeferredTaskType, workflowRunTaskType }

/** The task type of a durable clock (DurableClock.sleep): a scheduled task that completes the clock's deferred when due. */
export const workflowClockTaskType = "effect-asynq:wf:clock"

/** Options of the workflow engine layer. */
export interface WorkflowLayerOptions {
  /** Prefix of the control queues: a workflow's runs go to `<queue>:<workflow name>` (default "workflow"). */
  readonly queue?: string | undefined
  /** Control queues per workflow (default 1); more spread executions over Redis Cluster slots. Every process must agree. */
  readonly shards?: number | undefined
  /** Runs of one registered workflow processed at the same time in this process (default 10). */
  readonly concurrency?: number | undefined
  /** How many times asynq retries a run that failed for lack of Redis or a crash of its handler (default 25). */
  readonly runMaxRetry?: number | undefined
  /**
   * How long a complete execution's state is kept (ms; default: until deleted). Past it, starting
   * the same execution id starts it anew, and a parent replaying past it would run the child again:
   * keep it longer than any parent waits.
   */
  readonly completedRetentionMs?: number | undefined
  /** A run's timeout in seconds (default 1800, asynq's); a run longer than that is stopped and retried. */
  readonly runTimeoutSec?: number | undefined
  /**
   * More options of the worker that runs the registered workflows (queues and concurrency are set
   * by the layer; `retryDelay` defaults to 1 s doubling up to a minute, for runs whose worker died).
   */
  readonly server?: Omit<ServerOptions, "queues" | "concurrency"> | undefined
  /**
   * The version recorded by executions this process starts, for workflows without a `Version`
   * annotation (default: none). A run reads its execution's recorded version with `workflowVersion`.
   */
  readonly version?: string | undefined
  /**
   * Steps recorded per execution at most (default 10,000): stored activity results, completed
   * deferreds (fired durable clocks included) and dispatched remote steps. A step past it is not
   * run and the execution fails with WorkflowCapExceeded (`cap: "maxSteps"`).
   */
  readonly maxSteps?: number | undefined
  /**
   * Bytes of an execution's stored state at most (the fields and values of its hash, UTF-8;
   * default 64 MiB). A result that would take it past is not stored and the execution fails with
   * WorkflowCapExceeded (`cap: "maxStateBytes"`).
   */
  readonly maxStateBytes?: number | undefined
  /**
   * Bytes of one stored result at most (an activity's exit, a deferred's, the execution's own
   * result, as JSON; default 16 MiB). A larger one is not stored and the execution fails with
   * WorkflowCapExceeded (`cap: "maxResultBytes"`).
   */
  readonly maxResultBytes?: number | undefined
}

/** The resolved options. */
export interface Resolved {
  readonly queue: string
  readonly shards: number
  readonly concurrency: number
  readonly runMaxRetry: number
  readonly runTimeoutSec: number
  readonly completedRetentionMs: number
  readonly server: Omit<ServerOptions, "queues" | "concurrency">
  readonly version: string | undefined
  readonly maxSteps: number
  readonly maxStateBytes: number
  readonly maxResultBytes: number
}

/** Steps recorded per execution at most, by default. */
export const defaultMaxSteps = 10_000
/** Bytes of an execution's stored state at most, by default (64 MiB). */
export const defaultMaxStateBytes = 64 * 1024 * 1024
/** Bytes of one stored result at most, by default (16 MiB). */
export const defaultMaxResultBytes = 16 * 1024 * 1024

/** Options with their defaults, or an InvalidArgument naming the bad one (nothing started). */
export const resolve = (o: WorkflowLayerOptions = {}): Effect.Effect<Resolved, InvalidArgument> => {
  const bad = (field: string, message: string) =>
    Effect.fail(new InvalidArgument({ field, message: `workflow layer: ${message}` }))
  const shards = o.shards ?? 1
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024)
    return bad("shards", `shards must be an integer from 1 to 1024, got ${shards}`)
  const concurrency = o.concurrency ?? 10
  if (!Number.isInteger(concurrency) || concurrency < 1)
    return bad("concurrency", `concurrency must be a positive integer, got ${concurrency}`)
  const queue = o.queue ?? "workflow"
  if (queue.trim() === "" || /[{}\s]/.test(queue))
    return bad("queue", `queue must be a non-empty name without braces or spaces, got ${JSON.stringify(queue)}`)
  const runMaxRetry = o.runMaxRetry ?? 25
  if (!Number.isInteger(runMaxRetry) || runMaxRetry < 0)
    return bad("runMaxRetry", `runMaxRetry must be an integer >= 0, got ${runMaxRetry}`)
  const runTimeoutSec = o.runTimeoutSec ?? 1800
  if (!Number.isInteger(runTimeoutSec) || runTimeoutSec < 1)
    return bad("runTimeoutSec", `runTimeoutSec must be a whole number of seconds >= 1, got ${runTimeoutSec}`)
  const completedRetentionMs = o.completedRetentionMs ?? 0
  if (!Number.isFinite(completedRetentionMs) || completedRetentionMs < 0)
    return bad(
      "completedRetentionMs",
      `completedRetentionMs must be a finite number of ms >= 0, got ${completedRetentionMs}`
    )
  const version = o.version
  if (version !== undefined && (typeof version !== "string" || version === "" || version.length > 200))
    return bad(
      "version",
      `version must be a non-empty string of at most 200 characters, got ${JSON.stringify(version)}`
    )
  const caps = {
    maxSteps: o.maxSteps ?? defaultMaxSteps,
    maxStateBytes: o.maxStateBytes ?? defaultMaxStateBytes,
    maxResultBytes: o.maxResultBytes ?? defaultMaxResultBytes
  }
  for (const [field, v] of Object.entries(caps))
    if (!Number.isInteger(v) || v < 1) return bad(field, `${field} must be a positive integer, got ${v}`)
  return Effect.succeed({
    queue,
    shards,
    concurrency,
    runMaxRetry,
    runTimeoutSec,
    completedRetentionMs,
    server: o.server ?? {},
    version,
    ...caps
  })
}

/**
 * The retry delay of a run or clock task that failed (its worker crashed, lost Redis, was stopped):
 * 1 s, 2 s, 4 s, … up to a minute. A run is a replay, so trying again soon is safe, and asynq's
 * default (15 s and more) would hold a workflow up for nothing.
 */
const runRetryDelay = (retried: number): number => Math.min(1000 * 2 ** retried, 60_000)

/** What a run of this process knows of its execution: the hash read at its start, kept up to date with what the run writes. */
interface RunState {
  readonly queue: string
  readonly fields: Map<string, string>
  /** Steps recorded (see `isStep`) and bytes of the hash, as far as this run knows. */
  steps: number
  bytes: number
  readonly instance: WorkflowEngine.WorkflowInstance["Service"]
  fiber: Fiber.Fiber<Workflow.Result<unknown, unknown>, unknown> | undefined
}

interface Registered {
  readonly workflow: Workflow.Any
  readonly execute: (
    payload: object,
    executionId: string
  ) => Effect.Effect<unknown, unknown, WorkflowEngine.WorkflowInstance | WorkflowEngine.WorkflowEngine>
}

/** The payload of a remote step's check task. */
interface RemoteCheck {
  readonly workflow: string
  readonly executionId: string
  readonly step: string
  /** Where the outcome is recorded (`d:RemoteStep/<name>/<attempt>`) and the dispatch marker (`r:<name>/<attempt>`). */
  readonly deferredField: string
  readonly markerField: string
  /** The remote task. */
  readonly queue: string
  readonly taskId: string
  /** Which check this is (0 first); the next is due after min(initialMs × 2^n, maxMs). */
  readonly n: number
  readonly initialMs: number
  readonly maxMs: number
}

const textDecoder = new TextDecoder()

interface Parent {
  readonly workflow: string
  readonly executionId: string
}

/**
 * The deferreds a suspending run waits on: those it awaits (effect's `awaitedDeferreds`) with no
 * exit recorded yet. Recorded by workflowRunEnd in the same call as the suspension (no extra round
 * trip), so the inspector can show them as waiting.
 */
const awaitedNow = (instance: WorkflowEngine.WorkflowInstance["Service"], fields: ReadonlyMap<string, string>) =>
  Array.from(instance.awaitedDeferreds.keys()).filter((name) => !fields.has(`d:${name}`))

const InterruptField = "interrupt"

/** UTF-8 length of a string (what Redis stores). */
const utf8Length = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // A surrogate pair is 4 bytes: 2 for each half.
    n += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3
  }
  return n
}

/** Whether a field of the execution hash is a recorded step: an activity exit, a deferred (a remote step's counts as its dispatch), a remote dispatch. */
const isStep = (field: string): boolean =>
  field.startsWith("a:") || field.startsWith("r:") || (field.startsWith("d:") && !field.startsWith("d:RemoteStep/"))

/** A run's view of its execution, counting steps and bytes. */
const runStateOf = (
  queue: string,
  fields: Map<string, string>,
  instance: WorkflowEngine.WorkflowInstance["Service"]
): RunState => {
  let steps = 0
  let bytes = 0
  for (const [f, v] of fields) {
    if (isStep(f)) steps++
    bytes += utf8Length(f) + utf8Length(v)
  }
  return { queue, fields, instance, fiber: undefined, steps, bytes }
}

/** Records a field this run wrote (or read) in its view. */
const setField = (run: RunState, field: string, value: string) => {
  const old = run.fields.get(field)
  if (old === undefined) {
    if (isStep(field)) run.steps++
    run.bytes += utf8Length(field) + utf8Length(value)
  } else run.bytes += utf8Length(value) - utf8Length(old)
  run.fields.set(field, value)
}
const InterruptUnsafeField = "interruptUnsafe"

const isRedisError = (e: unknown): boolean => (e as { _tag?: string })._tag === "RedisError"
/** A failed broker call is tried again after 50 ms, then after 100, 200 and 400 ms. */
const firstRetryDelay = Duration.millis(50)
const retrySchedule = Schedule.exponential("100 millis")

/** Builds the engine (needs the Broker; registrations start a worker in their scope). */
export const make = (options?: WorkflowLayerOptions) =>
  Effect.gen(function* () {
    const opts = yield* resolve(options)
    const broker = yield* Broker
    const layerScope = yield* Effect.scope
    const workflows = new Map<string, Registered>()
    const runs = new Map<string, RunState>()
    const deferredState = WorkflowEngine.makeDeferredState()

    /**
     * A broker call: Redis errors retried a few times (after 50, 100, 200 and 400 ms), then a
     * defect (the Encoded contract has no error channel). The retry is only set up once a call
     * has failed: a call that succeeds (nearly all) costs no schedule.
     */
    const call = <A, E>(eff: Effect.Effect<A, E, Broker>): Effect.Effect<A> =>
      Effect.provideService(
        Effect.catch(eff, (e) => (isRedisError(e) ? retried(eff) : Effect.die(e))),
        Broker,
        broker
      )
    const retried = <A, E, R>(eff: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
      Effect.orDie(
        Effect.andThen(
          Effect.sleep(firstRetryDelay),
          Effect.retry(eff, { schedule: retrySchedule, times: 3, while: isRedisError })
        )
      )
    const redis = broker.redis
    /**
     * `call(runScript(def, input))` on the engine's own connection: one callback on the script's
     * Promise, its reply decoded there (no Broker lookup, no Effect per step of the call).
     */
    const script = <I, A, E>(def: ScriptDef<I, A, E>, input: I): Effect.Effect<A> => {
      /** One call: its decoded reply resumed as a success, a failure (or a rejection) as `onFailure` makes it. */
      const send = <X>(
        resume: (effect: Effect.Effect<A, X>) => void,
        onFailure: (e: unknown) => Effect.Effect<A, X>
      ) => {
        redis.scriptPromise(def.name, def.keys(input), def.args(input), def.buffers).then(
          (reply) => {
            let decoded: Result.Result<A, E | RedisError>
            try {
              decoded = def.decode(reply, input)
            } catch (e) {
              return resume(Effect.die(e))
            }
            resume(Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : onFailure(decoded.failure))
          },
          (e: unknown) => resume(onFailure(e))
        )
      }
      const call = (resume: (effect: Effect.Effect<A, E | RedisError>) => void) =>
        send(resume, (e) => Effect.fail(e as E | RedisError))
      // A failure is settled where it lands, so the usual path has no catch frame: a Redis error
      // is retried (the retries are the plain call), anything else is a defect.
      const failed = (e: unknown): Effect.Effect<A> =>
        isRedisError(e) ? retried(Effect.callback(call)) : Effect.die(e)
      return Effect.callback<A>((resume) => send(resume, failed))
    }

    const queueOf = (workflowName: string, executionId: string) => controlQueueOf(opts, workflowName, executionId)

    const registered = new Set<string>()
    /** asynq:queues lists the control queue (the CLI and asynqmon find it there); once per queue and process. */
    const registerQueue = (queue: string) =>
      registered.has(queue)
        ? Effect.void
        : Effect.tap(script(registerQueueScript, queue), () => Effect.sync(() => registered.add(queue)))

    const controlMessage = (type: string, id: string, queue: string, payload: unknown) =>
      controlMessageOf(opts, type, id, queue, payload)
    const nextRun = (queue: string, workflowName: string, executionId: string) =>
      nextRunOf(opts, queue, workflowName, executionId)
    /** Records a fact (or nothing) and wakes the execution. */
    const wake = (workflowName: string, executionId: string, field: string, value: string, mode: "a" | "e") =>
      call(wakeExecution(opts, workflowName, executionId, field, value, mode))

    /** Applies an interrupt to a run of this process: no new activity starts; an unsafe one also cuts the run short (it then ends interrupted). */
    const interruptLocal = (executionId: string, field: string) =>
      Effect.suspend(() => {
        const local = runs.get(executionId)
        if (!local || local.fields.has(field)) return Effect.void
        local.fields.set(field, "1")
        if (field !== InterruptUnsafeField || !local.fiber) return Effect.void
        local.instance.suspended = false
        return Effect.asVoid(Effect.forkIn(Fiber.interrupt(local.fiber), layerScope))
      })

    // Notices, on one subscription per layer opened on first use (a worker's first registration,
    // or the first awaitComplete): completions for `awaitComplete`, interrupts for running runs.
    const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
    // Subscribed once it worked: a failure (Redis down) is not remembered, the next use tries again.
    let isSubscribed = false
    const subscribing = Semaphore.makeUnsafe(1)
    const subscribed: Effect.Effect<void, RedisError | RedisConnectionError> = subscribing.withPermits(1)(
      Effect.suspend(() =>
        isSubscribed
          ? Effect.void
          : subscribeChannels([workflowDoneChannel, workflowInterruptChannel], {
              onMessage: (channel, message) => {
                if (channel === workflowInterruptChannel) {
                  const [, executionId, field] = message.split("\n")
                  if (executionId !== undefined && (field === InterruptField || field === InterruptUnsafeField))
                    Effect.runFork(interruptLocal(executionId, field))
                  return
                }
                const set = waiters.get(message)
                if (set) for (const d of set) Deferred.doneUnsafe(d, Exit.void)
              },
              onReady: () => {}
            }).pipe(
              Scope.provide(layerScope),
              Effect.provideService(Broker, broker),
              Effect.tap(() => Effect.sync(() => (isSubscribed = true)))
            )
      )
    )

    /** Records an interrupt, wakes the execution and tells the process running it. */
    const interruptWith = (workflow: Workflow.Any, executionId: string, field: string) =>
      Effect.gen(function* () {
        yield* wake(workflow._tag, executionId, field, "1", "e")
        yield* interruptLocal(executionId, field)
        yield* call(publishWorkflowInterrupt(queueOf(workflow._tag, executionId), executionId, field))
      })

    const resultOf = (
      workflow: Workflow.Any,
      state: string,
      result: string,
      failed: boolean
    ): Effect.Effect<Workflow.Result<unknown, unknown>> =>
      state === "complete" || (state === "suspended" && result !== "")
        ? codecsOf(workflow).decodeResult(result)
        : Effect.succeed(new Workflow.Suspended(failed ? { failed: true } : {}))

    /** Wakes the parent of a completed execution (again, when a run of a complete execution is retried: idempotent). */
    const wakeParent = (fields: ReadonlyMap<string, string>) => {
      const parent = fields.get("parent")
      if (parent === undefined) return Effect.void
      const p = JSON.parse(parent) as Parent
      return Effect.asVoid(wake(p.workflow, p.executionId, "", "", "a"))
    }

    /** The cap a new value of `actual` goes past, as the error to fail with; undefined within the caps. */
    const capOf = (
      workflow: string,
      executionId: string,
      cap: WorkflowCap,
      actual: number
    ): WorkflowCapExceeded | undefined => {
      const limit = opts[cap]
      if (actual <= limit) return undefined
      const what =
        cap === "maxSteps"
          ? `${actual} steps (activities, deferreds, clocks and remote steps recorded)`
          : cap === "maxStateBytes"
            ? `${actual} bytes of stored state`
            : `a result of ${actual} bytes`
      return new WorkflowCapExceeded({
        cap,
        limit,
        actual,
        workflow,
        executionId,
        message: `workflow "${workflow}" execution "${executionId}" would record ${what}, past the engine's cap ${cap} = ${limit}`
      })
    }

    /** The cap a new step recorded by this run would go past (its count, or with `value` under `field` its sizes). */
    const stepCap = (
      run: RunState | undefined,
      workflow: string,
      executionId: string,
      field?: string,
      value?: string
    ) => {
      if (run === undefined) return undefined
      const isNew = field === undefined || !run.fields.has(field)
      if (isNew && (field === undefined || isStep(field))) {
        const c = capOf(workflow, executionId, "maxSteps", run.steps + 1)
        if (c) return c
      }
      if (field === undefined || value === undefined) return undefined
      const size = utf8Length(value)
      return (
        capOf(workflow, executionId, "maxResultBytes", size) ??
        capOf(workflow, executionId, "maxStateBytes", run.bytes + utf8Length(field) + size)
      )
    }

    /** One run of an execution: the handler of its run task. */
    const runTask = (task: Task) =>
      Effect.gen(function* () {
        const { workflow: name, executionId } = task.json<{ workflow: string; executionId: string }>()
        const entry = workflows.get(name)
        if (entry === undefined)
          return yield* Effect.fail(new Error(`workflow "${name}" is not registered in this worker`))
        const queue = task.queue
        const start = yield* script(workflowRunStartScript, { queue, executionId, runId: task.id })
        if (start._tag === "Stale" || start._tag === "Missing") return
        if (start._tag === "Complete") return yield* wakeParent(start.fields)
        // The script's reply is this run's own map (workflowRunStart builds a new one per call).
        const fields = start.fields as Map<string, string>
        const workflow = entry.workflow
        const codecs = codecsOf(workflow)
        const payload = yield* codecs.decodePayload(fields.get("payload") ?? "{}")
        const suspendOnFailure = Context.get(workflow.annotations, Workflow.SuspendOnFailure)
        // The replay of the workflow, with the fields known so far.
        const instance = WorkflowEngine.WorkflowInstance.initial(workflow, executionId)
        const run = runStateOf(queue, fields, instance)
        runs.set(executionId, run)
        const fiber = yield* entry.execute(payload, executionId).pipe(
          Effect.onExit((exit) => {
            // As the memory engine: a safe interrupt takes effect when the run would suspend (or
            // fail under SuspendOnFailure); an unsafe one always. The run then ends interrupted,
            // so finalizers and compensations run and a final result is recorded.
            const interrupted = fields.has(InterruptField) || fields.has(InterruptUnsafeField)
            if (
              !interrupted ||
              (!fields.has(InterruptUnsafeField) &&
                !instance.suspended &&
                !instance.abandoned &&
                !(suspendOnFailure && Exit.isFailure(exit)))
            ) {
              return Effect.void
            }
            instance.interrupted = true
            instance.suspended = false
            return Effect.withFiber((f) => Effect.interruptible(Fiber.interrupt(f)))
          }),
          Workflow.intoResult,
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          (eff) => deferredState.trackRun(instance, eff),
          Effect.forkChild({ startImmediately: true })
        )
        run.fiber = fiber
        const exit = yield* Fiber.await(fiber).pipe(
          Effect.ensuring(Effect.sync(() => runs.get(executionId) === run && runs.delete(executionId)))
        )
        let result: Workflow.Result<unknown, unknown>
        if (Exit.isSuccess(exit)) result = exit.value
        else if (Cause.hasInterruptsOnly(exit.cause) && instance.suspended)
          result = new Workflow.Suspended({}) // preempted by a wake
        // Cut short by interruptUnsafe: the run's scope closed with the interrupt (its finalizers
        // and compensations ran), so that is the final result.
        else if (Cause.hasInterruptsOnly(exit.cause) && fields.has(InterruptUnsafeField))
          result = new Workflow.Complete({ exit: Exit.failCause(exit.cause) })
        else return yield* Effect.failCause(exit.cause) // stopped from outside (shutdown, lost lease): asynq retries the run
        // A result its schemas reject is recorded as a defect (retrying the run would not help).
        let encoded = yield* codecs.encodeResult(result).pipe(
          Effect.catchCause((cause) =>
            codecs.encodeResult(
              new Workflow.Complete({
                exit: Exit.die(`the result of workflow "${name}" does not fit its schemas: ${Cause.pretty(cause)}`)
              })
            )
          )
        )
        const tooBig = capOf(name, executionId, "maxResultBytes", utf8Length(encoded))
        if (tooBig !== undefined) {
          result = new Workflow.Complete({ exit: Exit.die(tooBig) })
          encoded = yield* codecs.encodeResult(result)
        }
        const outcome = result._tag === "Complete" ? "complete" : "suspended"
        // A complete execution enqueues no next run: the script reads the next run only on a suspension.
        const next =
          outcome === "complete"
            ? { queue, runId: "", runMessage: "", pendingSince: "" }
            : yield* nextRun(queue, name, executionId)
        // Written out, not spread: properties added to a spread object are slow stores (V8).
        const ended = yield* script(workflowRunEndScript, {
          queue: next.queue,
          runId: next.runId,
          runMessage: next.runMessage,
          pendingSince: next.pendingSince,
          executionId,
          endingRunId: task.id,
          outcome,
          result: encoded,
          failed: result._tag === "Suspended" && result.failed === true,
          retentionMs: opts.completedRetentionMs,
          waiting: outcome === "complete" ? undefined : awaitedNow(instance, fields)
        })
        if (ended === "recorded" && outcome === "complete") {
          yield* wakeParent(fields)
          yield* stopOutstandingRemoteSteps(name, executionId, fields)
        }
      })

    /**
     * The remote steps of a just completed execution whose outcome is not in: their tasks are
     * deleted while they wait (remoteStop.ts). Best effort: a task this misses (or one a server runs)
     * is seen to by the step's check, which keeps coming while the task runs.
     */
    const stopOutstandingRemoteSteps = (name: string, executionId: string, fields: ReadonlyMap<string, string>) =>
      Effect.forEach(
        outstandingRemoteSteps(fields),
        (step) =>
          stopRemoteTask(step.queue, step.taskId).pipe(
            Effect.provideService(Broker, broker),
            Effect.catch((e) =>
              Effect.logWarning(
                `workflow "${name}" execution "${executionId}": could not stop remote task "${step.taskId}" on queue "${step.queue}" (its check will): ${e.message}`
              )
            )
          ),
        { discard: true }
      )

    /** A durable clock that is due: completes its deferred (first write wins), which wakes the execution. */
    const clockTask = (task: Task) =>
      Effect.gen(function* () {
        const { workflow, executionId, name } = task.json<{ workflow: string; executionId: string; name: string }>()
        yield* wake(workflow, executionId, `d:DurableClock/${name}`, yield* encodeExit(Exit.void), "a")
      })

    /** A deferred completed by a control task (any asynq client): recorded as the token says, waking the execution. */
    const deferredTask = (task: Task) =>
      Effect.gen(function* () {
        const body = yield* Effect.try({
          try: () => task.json<{ token?: unknown; value?: unknown; error?: unknown }>(),
          catch: (e) => new SkipRetry(`${workflowDeferredTaskType}: the payload is not JSON: ${String(e)}`)
        })
        const token = yield* Effect.try({
          try: () => TokenParsed.fromString(String(body?.token)),
          catch: () => new SkipRetry(`${workflowDeferredTaskType}: "token" is not a DurableDeferred token`)
        })
        if (!("value" in body) && !("error" in body))
          return yield* new SkipRetry(
            `${workflowDeferredTaskType}: the payload needs "value" (success) or "error" (failure)`
          )
        const exit = "error" in body ? Exit.fail(body.error) : Exit.succeed(body.value)
        yield* wake(token.workflowName, token.executionId, `d:${token.deferredName}`, yield* encodeExit(exit), "a")
      })

    /** Enqueues a remote step's task (once per execution, step and attempt) and schedules its first check. */
    const dispatchRemote = (d: RemoteDispatch): Effect.Effect<void> =>
      Effect.gen(function* () {
        const executionId = d.instance.executionId
        const workflowName = d.instance.workflow._tag
        const run = runs.get(executionId)
        const queue = run?.queue ?? queueOf(workflowName, executionId)
        const deferredField = `d:${d.deferredName}`
        const markerField = `r:${d.name}/${d.attempt}`
        if (run && (run.fields.has(deferredField) || run.fields.has(markerField))) return
        // A pending interrupt replays only to rebuild compensations: nothing new is dispatched.
        if (run && (run.fields.has(InterruptField) || run.fields.has(InterruptUnsafeField)) && !d.instance.interrupted)
          return
        const over = stepCap(run, workflowName, executionId, markerField)
        if (over) return yield* Effect.die(over)
        const taskId = remoteTaskId(executionId, d.name, d.attempt)
        const remoteQueue = d.options.queue ?? "default"
        // The task id makes the enqueue idempotent: a replay (or a retried run) finds it taken.
        yield* call(
          enqueue(d.task, d.payload, {
            ...d.options,
            taskId,
            headers: { ...d.options.headers, [remoteTokenHeader]: d.token, [remoteControlQueueHeader]: queue }
          }).pipe(Effect.catchTag("TaskIdConflict", () => Effect.void))
        )
        const check: RemoteCheck = {
          workflow: workflowName,
          executionId,
          step: d.name,
          deferredField,
          markerField,
          queue: remoteQueue,
          taskId,
          n: 0,
          initialMs: d.pollInitialMs,
          maxMs: d.pollMaxMs
        }
        const marker = JSON.stringify({ queue: remoteQueue, taskId })
        yield* registerQueue(queue)
        yield* scheduleRemoteCheck(queue, check, "first", marker)
        if (run) setField(run, markerField, marker)
      })

    /** Schedules check number `check.n` of a remote step, due after its interval. */
    const scheduleRemoteCheck = (queue: string, check: RemoteCheck, mode: "first" | "next", marker: string) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const taskId = `rcheck:${check.executionId}:${check.markerField.slice(2)}#${check.n}`
        const delayMs = Math.min(check.initialMs * 2 ** check.n, check.maxMs)
        yield* script(workflowRemoteScheduleScript, {
          queue,
          executionId: check.executionId,
          deferredField: check.deferredField,
          markerField: check.markerField,
          markerValue: marker,
          mode,
          taskId,
          taskMessage: controlMessage(remoteCheckTaskType, taskId, queue, check),
          dueMs: nowMs + delayMs
        })
      })

    /**
     * A remote step's check is due: the remote task's outcome is recorded as the step's deferred
     * (completed: its result; archived, gone, or a result that is not JSON: RemoteStepFailed),
     * which wakes the execution; a task not done yet gets another check, later.
     */
    const remoteCheckTask = (task: Task) =>
      Effect.gen(function* () {
        const check = task.json<RemoteCheck>()
        // Nothing to do once the outcome is in (reported by the server) or the execution's state
        // expired (a wake would leave a stray hash behind); a complete execution's task is stopped.
        const [state, recorded] = yield* call(
          readExecutionFields(task.queue, check.executionId, ["state", check.deferredField])
        )
        if (state === undefined || recorded !== undefined) return
        if (state === "complete") {
          // Completed without this step's outcome: its task does not run for nobody (remoteStop.ts).
          // One a server runs is left to finish, and followed: a failed attempt's retry is deleted.
          const stop = yield* call(stopRemoteTask(check.queue, check.taskId))
          if (stop === "running") yield* scheduleRemoteCheck(task.queue, { ...check, n: check.n + 1 }, "next", "")
          return
        }
        const remote = yield* call(readRemoteTask(check.queue, check.taskId))
        const failed = (reason: RemoteStepFailed["reason"], message: string) =>
          Exit.fail({
            _tag: "RemoteStepFailed",
            step: check.step,
            queue: check.queue,
            taskId: check.taskId,
            reason,
            message: `remote step "${check.step}" (task "${check.taskId}" on queue "${check.queue}"): ${message}`
          })
        let exit: Exit.Exit<unknown, unknown>
        if (remote.state === "completed") {
          const text = remote.result === undefined ? "" : textDecoder.decode(remote.result)
          const tooBig = capOf(check.workflow, check.executionId, "maxResultBytes", remote.result?.length ?? 0)
          if (tooBig) exit = Exit.die(tooBig)
          else if (text === "") exit = Exit.void
          else {
            try {
              exit = Exit.succeed(JSON.parse(text))
            } catch {
              exit = failed(
                "result-not-json",
                `its result is not JSON: ${JSON.stringify(text.slice(0, 100))}${text.length > 100 ? "…" : ""}`
              )
            }
          }
        } else if (remote.state === "archived") {
          const msg = remote.msg === undefined ? undefined : decodeTaskMessage(remote.msg)
          exit = failed("archived", `the task was archived: ${msg?.errorMsg || "(no error message)"}`)
        } else if (remote.state === undefined) {
          exit = failed("task-gone", "the task is gone (deleted, or its retention ran out before its outcome was read)")
        } else {
          const queue = task.queue
          return yield* scheduleRemoteCheck(queue, { ...check, n: check.n + 1 }, "next", "")
        }
        yield* wake(check.workflow, check.executionId, check.deferredField, yield* encodeExit(exit), "a")
      })

    const encoded: WorkflowEngine.Encoded = {
      register: (workflow, execute) =>
        Effect.gen(function* () {
          if (workflows.has(workflow._tag))
            return yield* Effect.die(new Error(`workflow "${workflow._tag}" is registered twice with this engine`))
          workflows.set(workflow._tag, { workflow, execute })
          yield* Effect.addFinalizer(() => Effect.sync(() => workflows.delete(workflow._tag)))
          const queues = controlQueues(opts, workflow._tag)
          yield* Effect.forEach(queues, registerQueue, { discard: true })
          // Interrupt notices; without them an interrupt still applies at the execution's next run.
          yield* subscribed.pipe(
            Effect.catch((e) => Effect.logWarning(`workflow: interrupt notices unavailable for now: ${e.message}`))
          )
          yield* Server.start(
            {
              [workflowRunTaskType]: runTask,
              [workflowClockTaskType]: clockTask,
              [workflowDeferredTaskType]: deferredTask,
              [remoteCheckTaskType]: remoteCheckTask
            },
            {
              retryDelay: runRetryDelay,
              ...opts.server,
              concurrency: opts.concurrency,
              queues: Object.fromEntries(queues.map((q) => [q, 1]))
            }
          ).pipe(Effect.provideService(Broker, broker), Effect.orDie)
        }),

      execute: <const Discard extends boolean>(
        workflow: Workflow.Any,
        options: {
          readonly executionId: string
          readonly payload: object
          readonly discard: Discard
          readonly parent?: WorkflowEngine.WorkflowInstance["Service"] | undefined
          readonly detached?: boolean | undefined
        }
      ) =>
        Effect.suspend(() => {
          // A chain, not a generator: once per start, every step is one Effect.
          const { executionId } = options
          const queue = queueOf(workflow._tag, executionId)
          const codecs = codecsOf(workflow)
          const parent =
            options.parent !== undefined && !options.detached
              ? JSON.stringify({
                  workflow: options.parent.workflow._tag,
                  executionId: options.parent.executionId
                } satisfies Parent)
              : ""
          const version = Context.get(workflow.annotations, Version) ?? opts.version ?? ""
          return Effect.flatMap(codecs.encodePayload(options.payload), (payload) =>
            Effect.flatMap(Effect.andThen(registerQueue(queue), nextRun(queue, workflow._tag, executionId)), (run) =>
              Effect.flatMap(
                script(workflowStartScript, {
                  queue: run.queue,
                  runId: run.runId,
                  runMessage: run.runMessage,
                  pendingSince: run.pendingSince,
                  executionId,
                  workflow: workflow._tag,
                  payload,
                  parent,
                  version
                }),
                (started): Effect.Effect<Workflow.Result<unknown, unknown> | undefined> => {
                  if (options.discard) return Effect.undefined
                  if (started._tag === "Started") return Effect.succeed(new Workflow.Suspended({}))
                  return resultOf(workflow, started.state, started.result, started.failed)
                }
              )
            )
          )
        }) as Effect.Effect<Discard extends true ? void : Workflow.Result<unknown, unknown>>,

      poll: (workflow, executionId) =>
        Effect.gen(function* () {
          const [state, result, failed] = yield* call(
            readExecutionFields(queueOf(workflow._tag, executionId), executionId, ["state", "result", "failed"])
          )
          // As the memory engine: nothing while a run is pending or going; the last result otherwise.
          if (state !== "complete" && state !== "suspended") return Option.none()
          return Option.some(yield* resultOf(workflow, state, result ?? "", failed === "1"))
        }),

      awaitComplete: (workflow, executionId) =>
        Effect.gen(function* () {
          // Without the subscription, never early: the caller's retry schedule polls instead.
          yield* subscribed.pipe(Effect.catch(() => Effect.never))
          const queue = queueOf(workflow._tag, executionId)
          const key = `${queue}\n${executionId}`
          const done = yield* Deferred.make<void>()
          let set = waiters.get(key)
          if (!set) waiters.set(key, (set = new Set()))
          set.add(done)
          const forget = Effect.sync(() => {
            set.delete(done)
            if (set.size === 0 && waiters.get(key) === set) waiters.delete(key)
          })
          // Subscribed first, read second: a completion between the two is seen by the read.
          const [state] = yield* call(readExecutionFields(queue, executionId, ["state"]))
          if (state === "complete") return yield* forget
          yield* Deferred.await(done).pipe(Effect.ensuring(forget))
        }),

      interrupt: (workflow, executionId) => interruptWith(workflow, executionId, InterruptField),

      interruptUnsafe: (workflow, executionId) => interruptWith(workflow, executionId, InterruptUnsafeField),

      resume: (workflow, executionId) => Effect.asVoid(wake(workflow._tag, executionId, "", "", "e")),

      activityExecute: (activity: Activity.Any, attempt: number) =>
        Effect.flatMap(
          WorkflowEngine.WorkflowInstance,
          (instance): Effect.Effect<Workflow.Result<unknown, unknown>> => {
            const executionId = instance.executionId
            const run = runs.get(executionId)
            const queue = run?.queue ?? queueOf(instance.workflow._tag, executionId)
            const field = `a:${activity.name}/${attempt}`
            const stored = run?.fields.get(field)
            if (stored !== undefined) return Effect.sync(() => new Workflow.Complete({ exit: decodeExitText(stored) }))
            // A pending interrupt replays only to rebuild compensations: no new activity runs.
            if (
              run &&
              (run.fields.has(InterruptField) || run.fields.has(InterruptUnsafeField)) &&
              !instance.interrupted
            )
              return Effect.succeed(new Workflow.Suspended({}))
            // Past the step cap, the activity does not run: the execution fails with the cap.
            const overSteps = stepCap(run, instance.workflow._tag, executionId)
            if (overSteps) return Effect.succeed(new Workflow.Complete({ exit: Exit.die(overSteps) }))
            const activityInstance = WorkflowEngine.WorkflowInstance.initial(instance.workflow, executionId)
            activityInstance.interrupted = instance.interrupted
            const activityCodecs = activityCodecsOf(activity)
            const executeEncoded =
              activityCodecs === undefined ? activity.executeEncoded : activityCodecs.executeEncoded(activity as never)
            const execute = executeEncoded.pipe(
              Workflow.intoResult,
              Effect.provideService(WorkflowEngine.WorkflowInstance, activityInstance)
            ) as Effect.Effect<Workflow.Result<unknown, unknown>>
            return Effect.flatMap(execute, (result): Effect.Effect<Workflow.Result<unknown, unknown>> => {
              if (result._tag === "Suspended") return Effect.succeed(result)
              const exit = encodeExitText(result.exit)
              // A result past a size cap is not stored: the execution fails with the cap.
              const overSize = stepCap(run, instance.workflow._tag, executionId, field, exit)
              if (overSize) return Effect.succeed(new Workflow.Complete({ exit: Exit.die(overSize) }))
              // Stored before it is returned; the first write wins and every writer returns it.
              return Effect.flatMap(
                script(workflowActivityDoneScript, { queue, executionId, field, exit }),
                (written): Effect.Effect<Workflow.Result<unknown, unknown>> => {
                  const winner = written ?? exit
                  if (run) setField(run, field, winner)
                  return winner === exit
                    ? Effect.succeed(result)
                    : Effect.sync(() => new Workflow.Complete({ exit: decodeExitText(winner) }))
                }
              )
            })
          }
        ),

      deferredResult: (deferred: DurableDeferred.Any) =>
        Effect.gen(function* () {
          const instance = yield* WorkflowEngine.WorkflowInstance
          const executionId = instance.executionId
          const run = runs.get(executionId)
          const field = `d:${deferred.name}`
          let value = run?.fields.get(field)
          if (value === undefined) {
            const [read] = yield* call(
              readExecutionFields(run?.queue ?? queueOf(instance.workflow._tag, executionId), executionId, [field])
            )
            value = read
            if (value !== undefined && run) setField(run, field, value)
          }
          return value === undefined ? Option.none() : Option.some(yield* decodeExit(value))
        }),

      deferredDone: (o) =>
        Effect.gen(function* () {
          const exit = yield* encodeExit(o.exit)
          const tooBig = capOf(o.workflowName, o.executionId, "maxResultBytes", utf8Length(exit))
          if (tooBig) return yield* Effect.die(tooBig)
          const outcome = yield* wake(o.workflowName, o.executionId, `d:${o.deferredName}`, exit, "a")
          // A run of this process parked on the deferred is cut short (it replays at once, the wake
          // flag saw to that); forked, so a workflow completing its own deferred never waits on itself.
          if (outcome !== "already-set")
            yield* Effect.forkIn(deferredState.deferredDone(o.executionId, o.deferredName), layerScope)
        }),

      scheduleClock: (workflow, o) =>
        Effect.gen(function* () {
          const queue = queueOf(workflow._tag, o.executionId)
          const run = runs.get(o.executionId)
          if (run && !run.fields.has(`d:${o.clock.deferred.name}`)) {
            const over = stepCap(run, workflow._tag, o.executionId)
            if (over) return yield* Effect.die(over)
          }
          const nowMs = yield* Clock.currentTimeMillis
          const taskId = `clock:${o.executionId}:${o.clock.name}`
          const taskMessage = controlMessage(workflowClockTaskType, taskId, queue, {
            workflow: workflow._tag,
            executionId: o.executionId,
            name: o.clock.name
          })
          yield* registerQueue(queue)
          yield* script(workflowScheduleClockScript, {
            queue,
            executionId: o.executionId,
            deferredField: `d:${o.clock.deferred.name}`,
            taskId,
            taskMessage,
            wakeUpMs: nowMs + Duration.toMillis(o.clock.duration)
          })
        })
    }
    const typed = WorkflowEngine.makeUnsafe(encoded)
    // The typed engine's activity step decodes the stored exit with the activity's exitSchemaPartial,
    // built anew with every Activity.make: the activity's cached codecs do the same decode.
    const engine: WorkflowEngine.WorkflowEngine["Service"] = WorkflowEngine.WorkflowEngine.of({
      ...typed,
      activityExecute: (activity, attempt) => {
        const activityCodecs = activityCodecsOf(activity)
        if (activityCodecs === undefined) return typed.activityExecute(activity, attempt)
        return Effect.flatMap(
          encoded.activityExecute(activity, attempt),
          (result): Effect.Effect<Workflow.Result<unknown, unknown>> =>
            result._tag === "Suspended"
              ? Effect.succeed(result)
              : Effect.map(activityCodecs.decodeExit(result.exit), (exit) => new Workflow.Complete({ exit }))
        )
      }
    })
    engineExtras.set(engine, {
      dispatchRemote,
      versionOf: (executionId) => runs.get(executionId)?.fields.get("version")
    })
    return engine
  })
