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
import { Data, Effect, Exit, Layer, Result, Scope } from "effect"
import * as Context from "effect/Context"
import { Broker } from "./broker/Broker.js"
import { Redis } from "./redis/Redis.js"
import type { RedisOptions } from "./redis/options.js"
import { type EnqueueError, type EnqueueItem, enqueueManyUntraced, enqueueUntraced } from "./steps/enqueue.js"
import type { EnqueueOptions } from "./steps/options.js"
import type { TaskInfo } from "./steps/taskInfo.js"

export { DuplicateTask, InvalidArgument, TaskIdConflict } from "./broker/errors.js"
export { RedisConnectionError, RedisError } from "./redis/errors.js"
export { payloadJson, payloadText } from "./wire/payload.js"
export type { EnqueueError, EnqueueItem, EnqueueOptions, RedisOptions, TaskInfo }

/** `close()` was called: the client does not reconnect. */
export class ClientClosed extends Data.TaggedError("ClientClosed")<{ readonly message: string }> {}

/** One item's outcome in `enqueueMany`. */
export type EnqueueOutcome = { readonly ok: true; readonly info: TaskInfo } | { readonly ok: false; readonly error: EnqueueError }

export interface Client {
  /** Enqueues one task. Rejects with InvalidArgument, DuplicateTask, TaskIdConflict, RedisError, RedisConnectionError or ClientClosed. */
  enqueue(type: string, payload?: unknown, options?: EnqueueOptions): Promise<TaskInfo>
  /** Enqueues many tasks in one round trip; each item gets its own outcome, in input order. */
  enqueueMany(items: ReadonlyArray<EnqueueItem>): Promise<ReadonlyArray<EnqueueOutcome>>
  /** Closes the connection (QUIT). Safe to call more than once. */
  close(): Promise<void>
}

/**
 * A client. Options are the Redis connection options; without `url`, `cluster` and `sentinel`,
 * `process.env.REDIS_URL` is used, then redis://127.0.0.1:6379.
 */
export const createClient = (options: RedisOptions = {}): Client => {
  const redisOptions: RedisOptions =
    options.url === undefined && options.cluster === undefined && options.sentinel === undefined && process.env.REDIS_URL
      ? { ...options, url: process.env.REDIS_URL }
      : options
  const layer = Broker.layer.pipe(Layer.provide(Redis.layer(redisOptions)))
  let opened: Promise<{ scope: Scope.Closeable; context: Context.Context<Broker> }> | undefined
  // Once open: runs an effect with the broker context (built once, not per call).
  let runOpen: (<A, E>(eff: Effect.Effect<A, E, Broker>) => Promise<A>) | undefined
  let closed = false

  const open = () => {
    if (closed) return Promise.reject(new ClientClosed({ message: "the effect-asynq client is closed; create a new one with createClient()" }))
    opened ??= Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
        return { scope, context }
      })
    ).then((handle) => {
      if (!closed) runOpen = Effect.runPromiseWith(handle.context)
      return handle
    }, (e: unknown) => {
      opened = undefined // let the next call try again
      throw e
    })
    return opened
  }

  const run = <A, E>(eff: Effect.Effect<A, E, Broker>): Promise<A> =>
    runOpen !== undefined ? runOpen(eff) : open().then(({ context }) => Effect.runPromiseWith(context)(eff))

  return {
    // Untraced steps: a Promise caller has no tracer to receive spans.
    enqueue: (type, payload, opts) => run(enqueueUntraced(type, payload, opts)),
    enqueueMany: (items) =>
      run(enqueueManyUntraced(items)).then((rs) =>
        rs.map((r): EnqueueOutcome => (Result.isSuccess(r) ? { ok: true, info: r.success } : { ok: false, error: r.failure }))
      ),
    close: async () => {
      closed = true
      const current = opened
      opened = undefined
      runOpen = undefined
      if (!current) return
      const handle = await current.catch(() => undefined)
      if (handle) await Effect.runPromise(Scope.close(handle.scope, Exit.void))
    }
  }
}
