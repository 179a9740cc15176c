/**
 * The Promise client, for code that does not use Effect (`effect-asynq/client`):
 *
 *   const client = createClient({ url: process.env.REDIS_URL })
 *   const info = await client.enqueue("email:deliver", { userId: 42 }, { queue: "critical" })
 *   await client.close()
 *
 * Serverless-friendly: the connection is opened on the first call and reused by later calls (and
 * by later invocations of a warm function); there are no timers, background fibers or
 * subscriptions, and after `close()` nothing keeps the Node event loop alive. A failed first
 * connection is not remembered: the next call tries again.
 * Failures reject with the typed error objects (each has `_tag` and `message`).
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import { Broker, type BrokerShape } from "./broker/Broker.js"
import type { RedisOptions } from "./redis/options.js"
import type { IoredisModule } from "./redis/loadIoredis.js"
import { clientBrokerLayer, makePromiseRuntime } from "./runtime/promiseRuntime.js"
import { type EnqueueError, type EnqueueItem, enqueueManyUntraced, enqueuePromise } from "./steps/enqueue.js"
import type { EnqueueOptions } from "./steps/options.js"
import type { TaskInfo } from "./steps/taskInfo.js"
import type { TaskDefinition } from "./steps/TaskDefinition.js"
import { loadOtelApi, otelTraceHeaders } from "./observability/otelContext.js"
import { newTaskId } from "./steps/taskId.js"
import { enqueueThrottled, type EnqueueModeOptions, type EnqueueThrottledResult } from "./steps/enqueueThrottled.js"
import { enqueueDebounced, type EnqueueDebouncedResult } from "./steps/enqueueDebounced.js"
import { enqueueKeepLast, type EnqueueKeepLastOptions, type EnqueueKeepLastResult } from "./steps/enqueueKeepLast.js"

export { DuplicateTask, InvalidArgument, TaskIdConflict } from "./broker/errors.js"
export { CommandTimeout, isCommandTimeout, RedisConnectionError, RedisError } from "./redis/errors.js"
export { payloadJson, payloadText } from "./wire/payload.js"
export type { EnqueueError, EnqueueItem, EnqueueOptions, IoredisModule, RedisOptions, TaskDefinition, TaskInfo }
export type {
  EnqueueDebouncedResult,
  EnqueueKeepLastOptions,
  EnqueueKeepLastResult,
  EnqueueModeOptions,
  EnqueueThrottledResult
}

/** Options of `createClient`: where Redis is (RedisOptions), and the ioredis module to use when the options need ioredis. */
export interface ClientOptions extends RedisOptions {
  /**
   * The ioredis module (`import * as ioredis from "ioredis"`) for the options that need ioredis:
   * Redis Cluster, Sentinel, a `host:port` or unix socket address, `maxRetriesPerRequest`. Without
   * it, ioredis is imported at run time from node_modules when (and only when) such options are
   * given; pass it from a single-file bundle deployed without node_modules. A single node at a
   * redis:// or rediss:// URL never uses ioredis, given or not.
   */
  readonly ioredis?: IoredisModule | undefined
}

/** `close()` was called: the client does not reconnect. */
export class ClientClosed extends Data.TaggedError("ClientClosed")<{ readonly message: string }> {}

/** One item's outcome in `enqueueMany`. */
export type EnqueueOutcome =
  | { readonly ok: true; readonly info: TaskInfo }
  | { readonly ok: false; readonly error: EnqueueError }

/** The Promise client (`createClient`): enqueue one task or many (also throttled, debounced or keep-last), with a connection opened on the first call. */
export interface Client {
  /** Enqueues one task. Rejects with InvalidArgument, DuplicateTask, TaskIdConflict, RedisError, RedisConnectionError or ClientClosed. */
  enqueue(type: string, payload?: unknown, options?: EnqueueOptions): Promise<TaskInfo>
  /** Enqueues one task of a definition (defineTask): the payload is type-checked and validated (InvalidArgument `payload`, nothing written); the definition's options are the defaults. */
  enqueue<A>(task: TaskDefinition<A>, payload: A, options?: EnqueueOptions): Promise<TaskInfo>
  /** Enqueues many tasks in one round trip; each item gets its own outcome, in input order. */
  enqueueMany(items: ReadonlyArray<EnqueueItem>): Promise<ReadonlyArray<EnqueueOutcome>>
  /**
   * Throttle: enqueues the task (pending) unless its throttle key already let one through in the
   * current window, which starts with the task let through and does not end when it completes.
   * A throttled call writes nothing and resolves with `{ throttled: true, windowTaskId }`.
   * Rejects with InvalidArgument for a bad key or window (ms, >= 1) or options that set the task's
   * timing (processAt, processIn, group, unique); TaskIdConflict, RedisError, ClientClosed.
   *
   * ```ts
   * const r = await client.enqueueThrottled("stats:recompute", { userId }, { key: `stats:${userId}`, window: 60_000 })
   * ```
   */
  enqueueThrottled(
    type: string,
    payload: unknown,
    throttle: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueThrottledResult>
  /** Throttle with a task definition (defineTask): the payload is type-checked and validated. */
  enqueueThrottled<A>(
    task: TaskDefinition<A>,
    payload: A,
    throttle: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueThrottledResult>
  /**
   * Debounce: schedules the task a window from now and replaces the key's earlier task while that
   * one is still scheduled, so a burst of enqueues runs once, with the last payload, a window after
   * the burst's last enqueue. Resolves with the task's info and whether it replaced one.
   * Rejects with InvalidArgument for a bad key or window (ms, >= 1) or options that set the task's
   * timing or id (processAt, processIn, group, unique, taskId); TaskIdConflict, RedisError,
   * ClientClosed.
   *
   * ```ts
   * await client.enqueueDebounced("search:reindex", { docId }, { key: `doc:${docId}`, window: 5_000 })
   * ```
   */
  enqueueDebounced(
    type: string,
    payload: unknown,
    debounce: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueDebouncedResult>
  /** Debounce with a task definition (defineTask): the payload is type-checked and validated. */
  enqueueDebounced<A>(
    task: TaskDefinition<A>,
    payload: A,
    debounce: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueDebouncedResult>
  /**
   * Keep-last-while-active: when none of the key's tasks is unfinished, enqueues the task as usual
   * (pending); otherwise the task waits (scheduled) and replaces the key's one waiting task, and
   * runs once the key's current task has finished (or at the latest `maxWait` after its enqueue).
   * Resolves with the task's info, whether it waits and whether it replaced a waiting task.
   * Rejects with InvalidArgument for a bad key or maxWait or options that set the task's timing or
   * id (processAt, processIn, group, unique, taskId); TaskIdConflict, RedisError, ClientClosed.
   *
   * ```ts
   * await client.enqueueKeepLast("crm:sync", { customerId, snapshot }, { key: `crm:${customerId}` })
   * ```
   */
  enqueueKeepLast(
    type: string,
    payload: unknown,
    keepLast: EnqueueKeepLastOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueKeepLastResult>
  /** Keep-last with a task definition (defineTask): the payload is type-checked and validated. */
  enqueueKeepLast<A>(
    task: TaskDefinition<A>,
    payload: A,
    keepLast: EnqueueKeepLastOptions,
    options?: EnqueueOptions
  ): Promise<EnqueueKeepLastResult>
  /**
   * Opens the connection now, instead of on the first call: a wrong address or credentials fail at
   * startup (RedisConnectionError), and the first enqueue does not wait for the handshake. Resolves
   * at once when already connected; ClientClosed after `close()`.
   */
  connect(): Promise<void>
  /** Closes the connection (QUIT). Safe to call more than once. */
  close(): Promise<void>
}

/** Options with OpenTelemetry's current context as trace headers (as `enqueue` stores them); a header the caller set wins. */
const withOtelContext = (options: EnqueueOptions | undefined): EnqueueOptions | undefined => {
  const trace = otelTraceHeaders()
  return trace === undefined ? options : { ...options, headers: { ...trace, ...options?.headers } }
}

/**
 * A client. Options are the Redis connection options; without `url`, `cluster` and `sentinel`,
 * `process.env.REDIS_URL` is used, then redis://127.0.0.1:6379. A single node at a redis:// or
 * rediss:// URL is spoken to directly (RESP over one socket, no ioredis loaded); Redis Cluster,
 * Sentinel, a `host:port` or socket address and `maxRetriesPerRequest` use ioredis, imported when
 * the client connects (see ClientOptions.ioredis).
 */
export const createClient = (options: ClientOptions = {}): Client => {
  loadOtelApi()
  const { ioredis, ...redis } = options
  const runtime = makePromiseRuntime(clientBrokerLayer(redis, ioredis), {
    closedError: () =>
      new ClientClosed({ message: "the effect-asynq client is closed; create a new one with createClient()" })
  })
  // The broker of the built context (looked up once per build).
  let context: Context.Context<Broker> | undefined
  let broker: BrokerShape | undefined
  const currentBroker = (): BrokerShape | undefined => {
    const c = runtime.current()
    if (c !== context) {
      context = c
      broker = c === undefined ? undefined : Context.get(c, Broker)
    }
    return broker
  }
  return {
    // Untraced steps: a Promise caller has no Effect tracer to receive spans. Its OpenTelemetry
    // context (if @opentelemetry/api is installed) is read here, synchronously, at the call.
    // Once connected, an enqueue to a registered queue runs no Effect (see enqueuePromise).
    enqueue: (type: string | TaskDefinition<any>, payload?: unknown, opts?: EnqueueOptions) =>
      enqueuePromise(currentBroker(), runtime.run, type, payload, opts, otelTraceHeaders(), newTaskId),
    enqueueMany: (items) =>
      runtime
        .run(enqueueManyUntraced(items, newTaskId, otelTraceHeaders()))
        .then((rs) =>
          rs.map(
            (r): EnqueueOutcome =>
              Result.isSuccess(r) ? { ok: true, info: r.success } : { ok: false, error: r.failure }
          )
        ),
    enqueueThrottled: (
      type: string | TaskDefinition<any>,
      payload: unknown,
      mode: EnqueueModeOptions,
      opts?: EnqueueOptions
    ) => runtime.run(enqueueThrottled(type as string, payload, mode, withOtelContext(opts))),
    enqueueDebounced: (
      type: string | TaskDefinition<any>,
      payload: unknown,
      mode: EnqueueModeOptions,
      opts?: EnqueueOptions
    ) => runtime.run(enqueueDebounced(type as string, payload, mode, withOtelContext(opts))),
    enqueueKeepLast: (
      type: string | TaskDefinition<any>,
      payload: unknown,
      mode: EnqueueKeepLastOptions,
      opts?: EnqueueOptions
    ) => runtime.run(enqueueKeepLast(type as string, payload, mode, withOtelContext(opts))),
    connect: () => runtime.open().then(() => undefined),
    close: runtime.close
  }
}
