/**
 * Enqueue steps: create tasks exactly as asynq's Client does (same message, same keys, same
 * defaults). Due now → pending; due later → scheduled; with a group → aggregating. Time comes
 * from the Effect Clock. Nothing is written when an option is invalid.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Broker, BrokerShape } from "../broker/Broker.js"
import { InvalidArgument, type DuplicateTask, type TaskIdConflict } from "../broker/errors.js"
import {
  registerQueuePromise,
  sendRegisteredWrite,
  type TaskWrite,
  type WriteTarget,
  writeTask,
  writeTasks
} from "../broker/enqueue.js"
import type { RedisError } from "../redis/errors.js"
import type { TaskDefinition } from "./TaskDefinition.js"
import { allQueues, type TaskState } from "../wire/keys.js"
import { payloadSource, payloadTextBytes } from "../wire/payload.js"
import { encodeTaskMessageWithText, type TaskMessage } from "../wire/TaskMessage.js"
import { uniqueKey } from "../wire/uniqueKey.js"
import { maxSlabBytes } from "../wire/byteSlab.js"
import type { Mutable } from "../wire/protoFields.js"
import { currentTraceHeaders } from "./traceContext.js"
import {
  checkDurationMs,
  checkQueueName,
  checkWellFormed,
  type EnqueueOptions,
  maxInstantMs,
  type ResolvedEnqueueOptions,
  resolveEnqueueOptions
} from "./options.js"
import { newTaskId } from "./taskId.js"
import { type TaskInfo, taskInfoFromMessage } from "./taskInfo.js"

/** Why an enqueue was refused: bad input, a held unique lock, a taken task id, or Redis. */
export type EnqueueError = InvalidArgument | DuplicateTask | TaskIdConflict | RedisError

/** One task for `enqueueMany`: a type name, or a definition (its payload validated, its default options applied). */
export interface EnqueueItem {
  readonly type: string | TaskDefinition<any>
  readonly payload?: unknown
  readonly options?: EnqueueOptions | undefined
}

/** A payload's bytes, or (the plain type's encoder, `payloadSourceOf`) the text whose UTF-8 is its bytes. */
type PayloadEncoder = (payload: any) => Result.Result<Uint8Array | string | undefined, InvalidArgument>

interface Prepared {
  readonly write: TaskWrite
  readonly nextProcessAt: Date | undefined
}

/** The payload of a plain type (payloadSource: its bytes, or its text: a string, a value's JSON). */
const payloadSourceOf = (payload: unknown): Result.Result<Uint8Array | string | undefined, InvalidArgument> => {
  try {
    return Result.succeed(payloadSource(payload))
  } catch (e) {
    return Result.fail(new InvalidArgument({ field: "payload", message: e instanceof Error ? e.message : String(e) }))
  }
}

/**
 * Options resolved earlier in the same call, by options object (with the type they were checked
 * with): the items of an enqueueMany that share one options object are validated once.
 */
type OptionsMemo = Map<
  EnqueueOptions | undefined,
  { readonly type: string; readonly resolved: Result.Result<ResolvedEnqueueOptions, InvalidArgument> }
>

const pendingTarget: WriteTarget = { state: "pending" }

/**
 * A payload text longer than this (in characters) is encoded straight into the message's bytes
 * (encodeTaskMessageWithText); a shorter one is encoded on its own, into a shared slab (byteSlab.ts
 * `slabUtf8`, which takes texts up to a third of `maxSlabBytes`).
 */
const directTextChars = Math.floor(maxSlabBytes / 3)

/** Validates one task and builds its message and write (pure: no Redis, `nowMs` given). */
const prepare = (
  type: string,
  payload: unknown,
  options: EnqueueOptions | undefined,
  nowMs: number,
  newId: () => string,
  encode: PayloadEncoder,
  memo?: OptionsMemo
): Result.Result<Prepared, InvalidArgument> => {
  const hit = memo?.get(options)
  const resolved = hit !== undefined && hit.type === type ? hit.resolved : resolveEnqueueOptions(type, options, nowMs)
  if (memo !== undefined && hit === undefined) memo.set(options, { type, resolved })
  if (Result.isFailure(resolved)) return Result.fail(resolved.failure)
  const o = resolved.success
  const encoded = encode(payload)
  if (Result.isFailure(encoded)) return Result.fail(encoded.failure)
  const source = encoded.success
  // A long text without a uniqueness lock (whose key needs the payload's bytes first) is encoded
  // straight into the message's bytes, below; any other text into bytes of its own here.
  const text = typeof source === "string" && source.length > directTextChars && o.uniqueMs === undefined
  const bytes = typeof source === "string" ? (text ? undefined : payloadTextBytes(source)) : source
  // Every field spelled out (in field order), not spread from emptyTaskMessage: cheaper per task.
  const msg: Mutable<TaskMessage> = {
    type,
    payload: bytes,
    id: o.taskId ?? newId(),
    queue: o.queue,
    retry: o.maxRetry,
    retried: 0,
    errorMsg: "",
    timeout: o.timeoutSec,
    deadline: o.deadlineSec,
    uniqueKey: o.uniqueMs === undefined ? "" : uniqueKey(o.queue, type, bytes),
    lastFailedAt: 0,
    retention: o.retentionSec,
    completedAt: 0,
    groupKey: o.group ?? "",
    // Each task its own headers object, also when its options were resolved for an earlier item.
    headers: hit === undefined ? o.headers : { ...o.headers }
  }
  let messageBytes: Uint8Array | undefined
  if (text) {
    const direct = encodeTaskMessageWithText(msg, source as string)
    if (direct !== undefined) {
      msg.payload = direct.payload
      messageBytes = direct.bytes
    } else msg.payload = payloadTextBytes(source as string)
  }
  if (o.processAtMs !== undefined) {
    // asynq counts a scheduled task's uniqueness from its process-at time.
    const lock = o.uniqueMs === undefined ? undefined : o.processAtMs - nowMs + o.uniqueMs
    return Result.succeed({
      write: {
        msg,
        nowMs,
        target: { state: "scheduled", processAtMs: o.processAtMs },
        uniqueLockTtlMs: lock,
        encoded: messageBytes
      },
      nextProcessAt: new Date(o.processAtMs)
    })
  }
  if (o.limitKey !== undefined) {
    return Result.succeed({
      write: {
        msg,
        nowMs,
        target: { state: "keyed", limitKey: o.limitKey },
        uniqueLockTtlMs: o.uniqueMs,
        encoded: messageBytes
      },
      nextProcessAt: undefined
    })
  }
  if (o.group !== undefined) {
    return Result.succeed({
      write: {
        msg,
        nowMs,
        target: { state: "aggregating", group: o.group },
        uniqueLockTtlMs: o.uniqueMs,
        encoded: messageBytes
      },
      nextProcessAt: undefined
    })
  }
  return Result.succeed({
    write: { msg, nowMs, target: pendingTarget, uniqueLockTtlMs: o.uniqueMs, encoded: messageBytes },
    nextProcessAt: new Date(nowMs)
  })
}

/** A definition's default options overridden by the call's (an option given as undefined keeps the default). */
const withDefaults = (
  defaults: EnqueueOptions | undefined,
  options: EnqueueOptions | undefined
): EnqueueOptions | undefined => {
  if (defaults === undefined) return options
  if (options === undefined) return defaults
  const merged: Record<string, unknown> = { ...defaults }
  for (const [k, v] of Object.entries(options)) if (v !== undefined) merged[k] = v
  return merged as EnqueueOptions
}

/** The type name, the effective options and the payload encoder of a plain type (as given) or a definition. */
const typeName = (task: string | TaskDefinition<any>): string => (typeof task === "string" ? task : task.type)
const optionsFor = (task: string | TaskDefinition<any>, options: EnqueueOptions | undefined) =>
  typeof task === "string" ? options : withDefaults(task.options, options)
const encoderFor = (task: string | TaskDefinition<any>): PayloadEncoder =>
  typeof task === "string" ? payloadSourceOf : task.encodePayload

const info = (p: Prepared, state: TaskState): TaskInfo =>
  taskInfoFromMessage(p.write.msg, state, { nextProcessAt: p.nextProcessAt })

/** Options with trace headers added (`traceparent`, `tracestate`); a header the caller set wins. */
const withTrace = (
  options: EnqueueOptions | undefined,
  trace: Readonly<Record<string, string>> | undefined
): EnqueueOptions | undefined =>
  trace === undefined ? options : { ...options, headers: { ...trace, ...options?.headers } }

/**
 * Enqueues one task: `payload` is bytes, a string (UTF-8) or a JSON value (see encodePayload).
 * With a definition (defineTask) the payload is type-checked and validated against its schema
 * (InvalidArgument `payload`, nothing written) and the definition's options are the defaults.
 * One round trip (including the first-time registration of the queue in `asynq:queues`).
 */
export const enqueue: {
  <A>(task: TaskDefinition<A>, payload: A, options?: EnqueueOptions): Effect.Effect<TaskInfo, EnqueueError, Broker>
  (type: string, payload: unknown, options?: EnqueueOptions): Effect.Effect<TaskInfo, EnqueueError, Broker>
} = Effect.fn("Steps.enqueue")(function* (
  type: string | TaskDefinition<any>,
  payload: unknown,
  options?: EnqueueOptions
): Effect.fn.Return<TaskInfo, EnqueueError, Broker> {
  // With a span active (and a tracer installed) the task carries its W3C traceparent header.
  return yield* enqueueUntraced(type, payload, options, newTaskId, yield* currentTraceHeaders)
})

/** Validates one call and builds its write (pure: no Redis, `nowMs` given); shared by the Effect step and the Promise client. */
const prepareCall = (
  task: string | TaskDefinition<any>,
  payload: unknown,
  callOptions: EnqueueOptions | undefined,
  nowMs: number,
  newId: () => string,
  trace: Readonly<Record<string, string>> | undefined
): Result.Result<Prepared, InvalidArgument> => {
  const options = effectiveOptions(task, payload, callOptions)
  if (Result.isFailure(options)) return Result.fail(options.failure)
  return prepare(typeName(task), payload, withTrace(options.success, trace), nowMs, newId, encoderFor(task))
}

/** The options of one enqueue: the definition's defaults and the call's, with a definition's limitKey function applied to the payload. */
const effectiveOptions = (
  task: string | TaskDefinition<any>,
  payload: unknown,
  callOptions: EnqueueOptions | undefined
): Result.Result<EnqueueOptions | undefined, InvalidArgument> => {
  const options = optionsFor(task, callOptions)
  if (typeof task === "string" || task.limitKeyOf === undefined || callOptions?.limitKey !== undefined)
    return Result.succeed(options)
  return Result.map(limitKeyOfPayload(task, payload), (limitKey) => ({ ...options, limitKey }))
}

/** A definition's limit key for a payload (its `limitKey` function); a throw or a non-string is an InvalidArgument. */
const limitKeyOfPayload = (task: TaskDefinition<any>, payload: unknown): Result.Result<string, InvalidArgument> => {
  try {
    const key: unknown = task.limitKeyOf!(payload)
    return typeof key === "string"
      ? Result.succeed(key)
      : Result.fail(
          new InvalidArgument({
            field: "limitKey",
            message: `the limitKey function of task "${task.type}" returned ${typeof key}, not a string`
          })
        )
  } catch (e) {
    return Result.fail(
      new InvalidArgument({
        field: "limitKey",
        message: `the limitKey function of task "${task.type}" threw: ${e instanceof Error ? e.message : String(e)}`
      })
    )
  }
}

/** A validated enqueue: the write to send and the TaskInfo of the task once written in `state`. */
export interface PreparedEnqueue {
  readonly write: TaskWrite
  readonly info: (state: TaskState) => TaskInfo
}

/**
 * Validates one enqueue and builds its write (pure: no Redis, `nowMs` given), for a write that
 * another script makes (the signed HTTP enqueue, src/steps/enqueueSigned.ts).
 * @internal
 */
export const prepareEnqueue = (
  task: string | TaskDefinition<any>,
  payload: unknown,
  options: EnqueueOptions | undefined,
  nowMs: number,
  trace?: Readonly<Record<string, string>>
): Result.Result<PreparedEnqueue, InvalidArgument> =>
  Result.map(prepareCall(task, payload, options, nowMs, newTaskId, trace), (p) => ({
    write: p.write,
    info: (state: TaskState) => info(p, state)
  }))

/**
 * `enqueue` without its span and call-site frame (capturing that frame is most of the Effect
 * overhead of an enqueue). For the Promise client, which has no tracer to report spans to.
 * @internal
 */
export const enqueueUntraced = (
  task: string | TaskDefinition<any>,
  payload: unknown,
  callOptions?: EnqueueOptions,
  newId: () => string = newTaskId,
  /** Trace headers to store (traceContext.ts); the caller's own headers win. */
  trace?: Readonly<Record<string, string>>
): Effect.Effect<TaskInfo, EnqueueError, Broker> =>
  Effect.flatMap(Clock.currentTimeMillis, (nowMs): Effect.Effect<TaskInfo, EnqueueError, Broker> => {
    const p = prepareCall(task, payload, callOptions, nowMs, newId, trace)
    if (Result.isFailure(p)) return Effect.fail(p.failure)
    // One id per call, never replaced: a TaskIdConflict on a generated id means the write itself
    // landed before (its reply lost) and the task has changed since; a new id would be a second task.
    return Effect.map(writeTask(p.success.write), (state) => info(p.success, state))
  })

/**
 * `enqueueUntraced` for the Promise client, with no Effect run per call once connected: when
 * `broker` is given (the client's connection is up) the validated write goes straight to its
 * script call (`sendRegisteredWrite`: the same call, decoding and lost-reply resends the Effect
 * step runs), after the queue's registration when the queue is not known to be registered (the
 * first call per queue and minute: `registerQueuePromise`). Without a broker (not connected yet, or
 * closed) `run` runs the Effect step.
 * Time is the system clock (the Promise client runs on Effect's default Clock, which reads it too).
 * @internal
 */
export const enqueuePromise = (
  broker: BrokerShape | undefined,
  run: <A, E>(effect: Effect.Effect<A, E, Broker>) => Promise<A>,
  task: string | TaskDefinition<any>,
  payload: unknown,
  callOptions: EnqueueOptions | undefined,
  trace: Readonly<Record<string, string>> | undefined,
  newId: () => string = newTaskId
): Promise<TaskInfo> => {
  if (broker === undefined) return run(enqueueUntraced(task, payload, callOptions, newId, trace))
  const nowMs = Date.now()
  let p: Result.Result<Prepared, InvalidArgument>
  try {
    p = prepareCall(task, payload, callOptions, nowMs, newId, trace)
  } catch (e) {
    return Promise.reject(e)
  }
  if (Result.isFailure(p)) return Promise.reject(p.failure)
  const prepared = p.success
  const w = prepared.write
  if (!broker.knownQueues.has(w.msg.queue, nowMs)) {
    // The first call to a queue (per minute): its registration is sent ahead of the write, as the
    // Effect step does in one batch, and a failed one is logged the same way.
    registerQueuePromise(broker, w.msg.queue, nowMs, (e) => {
      run(Effect.logWarning(`could not add queue(s) to ${allQueues}: ${e.message}`)).catch(() => {})
    })
  }
  return sendRegisteredWrite(broker.redis, w, (r) => {
    if (Result.isFailure(r)) throw r.failure
    return info(prepared, r.success)
  })
}

/**
 * Enqueues many tasks in one round trip (on a Redis Cluster: one per queue, all sent at once).
 * Every item gets its own result, in input order: a rejected item (invalid options, duplicate,
 * id conflict) does not stop the others. Items of one call are written in input order, so a
 * second item with the same unique key or id as an earlier one gets DuplicateTask/TaskIdConflict
 * — unless it is the same message (same id, same fields and headers, whatever the order of its
 * headers' bytes: lua/includes/sameTaskMessage.lua): that is the same write, a success with no
 * second task.
 */
export const enqueueMany = Effect.fn("Steps.enqueueMany")(function* (
  items: ReadonlyArray<EnqueueItem>
): Effect.fn.Return<ReadonlyArray<Result.Result<TaskInfo, EnqueueError>>, never, Broker> {
  return yield* enqueueManyUntraced(items, newTaskId, yield* currentTraceHeaders)
})

/** `enqueueMany` without its span and call-site frame (for the Promise client). @internal */
export const enqueueManyUntraced = Effect.fnUntraced(function* (
  items: ReadonlyArray<EnqueueItem>,
  newId: () => string = newTaskId,
  /** Trace headers every item stores (an item's own headers win). */
  trace?: Readonly<Record<string, string>>
): Effect.fn.Return<ReadonlyArray<Result.Result<TaskInfo, EnqueueError>>, never, Broker> {
  const nowMs = yield* Clock.currentTimeMillis
  const results: Array<Result.Result<TaskInfo, EnqueueError>> = new Array(items.length)
  // The valid items (index into `items`), their prepared tasks and writes; one id each, never replaced.
  const index: Array<number> = []
  const prepared: Array<Prepared> = []
  const writes: Array<TaskWrite> = []
  // Items sharing an options object (without trace headers: those make one per item) resolve it once.
  const memo: OptionsMemo | undefined = trace === undefined ? new Map() : undefined
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!
    const options = effectiveOptions(it.type, it.payload, it.options)
    const r = Result.isFailure(options)
      ? Result.fail(options.failure)
      : prepare(
          typeName(it.type),
          it.payload,
          withTrace(options.success, trace),
          nowMs,
          newId,
          encoderFor(it.type),
          memo
        )
    if (Result.isFailure(r)) results[i] = Result.fail(r.failure)
    else {
      index.push(i)
      prepared.push(r.success)
      writes.push(r.success.write)
    }
  }
  const outcomes = yield* writeTasks(writes)
  for (let j = 0; j < index.length; j++) {
    const o = outcomes[j]!
    results[index[j]!] = Result.isSuccess(o) ? Result.succeed(info(prepared[j]!, o.success)) : Result.fail(o.failure)
  }
  return results
})

/** Options of `enqueueMessage`. */
export interface EnqueueMessageOptions {
  /** Process at this unix time (ms); due now or earlier (or absent) → pending (or the group). */
  readonly processAtMs?: number | undefined
  /** Uniqueness TTL (ms, >= 1000), counted from the process-at time for a scheduled task. The lock key is `msg.uniqueKey`, or asynq's key for the message when empty. */
  readonly uniqueTtlMs?: number | undefined
}

/**
 * Writes a ready-made message (from the scheduler, the aggregator or another pipeline): scheduled
 * when `processAtMs` is after now, else aggregating when it has a group key, else pending.
 * Returns the state it was written in.
 */
export const enqueueMessage = Effect.fn("Steps.enqueueMessage")(function* (
  msg: TaskMessage,
  opts: EnqueueMessageOptions = {}
): Effect.fn.Return<TaskState, EnqueueError, Broker> {
  const nowMs = yield* Clock.currentTimeMillis
  const fail = (field: string, message: string) => Effect.fail(new InvalidArgument({ field, message }))
  if (msg.type.trim() === "") return yield* fail("type", "task type must be a non-empty string (not only whitespace)")
  if (msg.id.trim() === "") return yield* fail("id", "task id must be a non-empty string (not only whitespace)")
  yield* Effect.fromResult(checkQueueName(msg.queue))
  yield* Effect.fromResult(checkWellFormed("type", msg.type, "task type"))
  yield* Effect.fromResult(checkWellFormed("id", msg.id, "task id"))
  yield* Effect.fromResult(checkWellFormed("groupKey", msg.groupKey, "group key"))
  for (const [k, v] of Object.entries(msg.headers)) {
    yield* Effect.fromResult(checkWellFormed("headers", k, "header name"))
    yield* Effect.fromResult(checkWellFormed("headers", v, `header ${JSON.stringify(k)} value`))
  }
  const ttl = opts.uniqueTtlMs
  if (ttl !== undefined) yield* Effect.fromResult(checkDurationMs("uniqueTtlMs", ttl, 1000))
  const processAtMs = opts.processAtMs
  if (processAtMs !== undefined && !Number.isFinite(processAtMs))
    return yield* fail("processAtMs", `processAtMs must be a finite unix time in milliseconds, got ${processAtMs}`)
  if (processAtMs !== undefined && processAtMs > maxInstantMs) {
    return yield* fail(
      "processAtMs",
      `processAtMs must be at most ${new Date(maxInstantMs).toISOString()} (unix ms ${maxInstantMs}), got ${processAtMs}`
    )
  }
  const m: TaskMessage =
    ttl !== undefined && msg.uniqueKey === "" ? { ...msg, uniqueKey: uniqueKey(msg.queue, msg.type, msg.payload) } : msg
  const write: TaskWrite =
    processAtMs !== undefined && processAtMs > nowMs
      ? {
          msg: m,
          nowMs,
          target: { state: "scheduled", processAtMs },
          uniqueLockTtlMs: ttl === undefined ? undefined : processAtMs - nowMs + ttl
        }
      : m.groupKey !== ""
        ? { msg: m, nowMs, target: { state: "aggregating", group: m.groupKey }, uniqueLockTtlMs: ttl }
        : { msg: m, nowMs, target: { state: "pending" }, uniqueLockTtlMs: ttl }
  return yield* writeTask(write)
})
