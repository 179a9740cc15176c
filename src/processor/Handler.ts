/**
 * Handlers: a function `(task, signal) => Effect | Promise | void`. An Effect handler may read
 * TaskContext; an async handler gets an AbortSignal that fires when the attempt is stopped
 * (timeout, deadline, cancel, lost lease, shutdown). A thrown error, a rejected promise, a failed
 * Effect or a defect are all failures, their message kept as the task's error.
 */
import * as Effect from "effect/Effect"
import { TaskContext, type TaskContextShape } from "./TaskContext.js"
import type { Task } from "./Task.js"

/** What a handler function may return. */
export type HandlerResult<R = never> = Effect.Effect<unknown, unknown, R | TaskContext> | PromiseLike<unknown> | void

/** A handler as users write it. */
export type HandlerFn<R = never> = (task: Task, signal: AbortSignal) => HandlerResult<R>

/**
 * A handler in its single internal form: an Effect that needs the TaskContext. A handler made from
 * a function (toHandler, a record or a ServeMux without middleware) also carries `direct`: the same
 * call without an Effect built around it, which the processor uses to run a plain or async
 * function without a fiber of its own (an Effect it returns still runs as the handler).
 */
export interface Handler<R = never> {
  (task: Task): Effect.Effect<void, unknown, R | TaskContext>
  /** Calls the handler's function for `task` with the attempt's context; what it returns (or throws) is the outcome. */
  readonly direct?: (task: Task, ctx: TaskContextShape) => HandlerResult<R>
}

/** Wraps a handler (asynq's MiddlewareFunc). */
export type Middleware<R = never> = (next: Handler<R>) => Handler<R>

export const isThenable = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof (u as { then: unknown }).then === "function"

/** What a handler function returned (or threw), as the handler's Effect. */
const resultEffect = <R>(call: () => HandlerResult<R>): Effect.Effect<void, unknown, R | TaskContext> => {
  let out: HandlerResult<R>
  try {
    out = call()
  } catch (e) {
    return Effect.fail(e)
  }
  if (Effect.isEffect(out)) return Effect.asVoid(out as Effect.Effect<unknown, unknown, R | TaskContext>)
  if (isThenable(out)) {
    const p = out
    return Effect.asVoid(Effect.tryPromise({ try: () => Promise.resolve(p), catch: (e) => e }))
  }
  return Effect.void
}

/** Runs a user handler function, whatever it returns, as an Effect (and as a direct call: Handler.direct). */
export const toHandler = <R = never>(fn: HandlerFn<R>): Handler<R> => {
  // A function declaring only `task` never sees the signal: skip creating it (it is made on first read).
  const direct: NonNullable<Handler<R>["direct"]> =
    fn.length === 1 ? (task) => (fn as (task: Task) => HandlerResult<R>)(task) : (task, ctx) => fn(task, ctx.signal)
  return Object.assign((task: Task) => Effect.flatMap(TaskContext, (ctx) => resultEffect(() => direct(task, ctx))), {
    direct
  })
}

/** Applies middleware so that the first in the list runs first (outermost), as asynq's `Use`. */
export const applyMiddleware = <R>(handler: Handler<R>, middleware: ReadonlyArray<Middleware<R>>): Handler<R> =>
  middleware.reduceRight((h, mw) => mw(h), handler)

/**
 * A middleware written with Promises: `(task, signal, next) => …`, where `next()` runs the rest of
 * the chain and rejects with its failure.
 */
export const asyncMiddleware =
  <R = never>(fn: (task: Task, signal: AbortSignal, next: () => Promise<void>) => Promise<void>): Middleware<R> =>
  (next) =>
  (task) =>
    Effect.flatMap(Effect.context<R | TaskContext>(), (context) =>
      Effect.flatMap(TaskContext, (ctx) =>
        Effect.tryPromise({
          // The rest of the chain runs as its own fiber: tie it to this one, so a timeout, cancel or
          // shutdown that interrupts the attempt interrupts an Effect handler behind the middleware too.
          try: (interrupted) =>
            fn(task, ctx.signal, () => Effect.runPromiseWith(context)(next(task), { signal: interrupted })),
          catch: (e) => e
        })
      )
    )
