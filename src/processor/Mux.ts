/**
 * ServeMux: routes a task to the handler whose pattern is the longest prefix of the task's type
 * ("images:thumbnails" wins over "images" for "images:thumbnails:small"), as asynq's ServeMux.
 * Middleware added with `use` wraps every routed handler, first added = outermost.
 */
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"
import { type Handler, type HandlerFn, type Middleware, applyMiddleware, toHandler } from "./Handler.js"
import { HandlerNotFound } from "./errors.js"
import { type PayloadHandlerFn, payloadHandler } from "./payloadHandler.js"
import type { TaskDefinition } from "../steps/TaskDefinition.js"
import type { Task } from "./Task.js"
import type { TaskContextShape } from "./TaskContext.js"

/** Routes tasks to handlers by the longest matching type prefix, with middleware around every handler (asynq's ServeMux). */
export class ServeMux<R = never> {
  private readonly entries = new Map<string, Handler<R>>()
  private sorted: Array<string> = []
  private readonly middleware: Array<Middleware<R>> = []

  /** Registers a handler function (Effect or async) for a pattern. Throws InvalidArgument on an empty or duplicate pattern. */
  handle(pattern: string, handler: HandlerFn<R>): this
  /**
   * Registers a handler for a definition's type (defineTask): it receives the decoded, typed
   * payload; a payload that does not decode archives the task at once (SkipRetry) with the schema's message.
   */
  handle<A>(task: TaskDefinition<A>, handler: PayloadHandlerFn<A, R>): this
  handle(pattern: string | TaskDefinition<any>, handler: HandlerFn<R> | PayloadHandlerFn<any, R>): this {
    if (typeof pattern === "string") return this.handleEffect(pattern, toHandler(handler as HandlerFn<R>))
    return this.handleEffect(pattern.type, payloadHandler(pattern, handler as PayloadHandlerFn<any, R>))
  }

  /** Registers an already-normalized Handler. */
  handleEffect(pattern: string, handler: Handler<R>): this {
    if (pattern.trim() === "")
      throw new InvalidArgument({ field: "pattern", message: "a mux pattern must be a non-empty string" })
    if (this.entries.has(pattern))
      throw new InvalidArgument({
        field: "pattern",
        message: `a handler is already registered for pattern "${pattern}"`
      })
    this.entries.set(pattern, handler)
    this.sorted = [...this.entries.keys()].sort((a, b) => b.length - a.length)
    return this
  }

  /** Appends middleware; they run in the order added. */
  use(...middleware: ReadonlyArray<Middleware<R>>): this {
    this.middleware.push(...middleware)
    return this
  }

  /** The registered pattern that matches `type` (longest prefix), or undefined. */
  match(type: string): string | undefined {
    return this.sorted.find((p) => type.startsWith(p))
  }

  /** The mux as one Handler: route, apply middleware, or fail with HandlerNotFound. */
  readonly handler: Handler<R> = Object.assign(
    (task: Task) => applyMiddleware(this.route(task.type), this.middleware)(task),
    {
      // Without middleware, the routed handler's direct call (a plain or async function runs without a fiber of its own).
      direct: (task: Task, ctx: TaskContextShape) => {
        if (this.middleware.length > 0) return applyMiddleware(this.route(task.type), this.middleware)(task)
        const h = this.route(task.type)
        return h.direct ? h.direct(task, ctx) : h(task)
      }
    }
  )

  /** The handler registered for `type`'s pattern, or one that fails with HandlerNotFound. */
  private route(type: string): Handler<R> {
    const pattern = this.match(type)
    return pattern === undefined ? notFound : this.entries.get(pattern)!
  }
}

const notFound: Handler<any> = (t) =>
  Effect.fail(new HandlerNotFound({ type: t.type, message: `handler not found for task "${t.type}"` }))

/** What a server accepts as its handler: a mux, a map of patterns to handler functions, or one function for every task. */
export type HandlerInput<R = never> = ServeMux<R> | Readonly<Record<string, HandlerFn<R>>> | HandlerFn<R>

/** One Handler from any HandlerInput (a record becomes a mux). */
export const handlerOf = <R>(input: HandlerInput<R>): Handler<R> => {
  if (input instanceof ServeMux) return input.handler
  if (typeof input === "function") return toHandler(input)
  const mux = new ServeMux<R>()
  for (const [pattern, fn] of Object.entries(input)) mux.handle(pattern, fn)
  return mux.handler
}
