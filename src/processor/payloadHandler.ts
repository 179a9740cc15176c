/**
 * Handlers for a task definition (defineTask): the payload is decoded with the definition's schema
 * before the handler runs, and the handler receives it typed. A payload that does not decode can
 * never succeed, so the task is archived at once (SkipRetry) with the schema's message, and the
 * handler does not run.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { TaskDefinition } from "../steps/TaskDefinition.js"
import { type Handler, type HandlerResult, toHandler } from "./Handler.js"
import { SkipRetry } from "./errors.js"
import type { Task } from "./Task.js"

/** A handler of a definition's tasks: the decoded payload, the task, and (if declared) the attempt's AbortSignal. */
export type PayloadHandlerFn<A, R = never> = (payload: A, task: Task, signal: AbortSignal) => HandlerResult<R>

/** The Handler that decodes `definition`'s payload, then runs `fn` with it. */
export const payloadHandler = <A, R = never>(definition: TaskDefinition<A>, fn: PayloadHandlerFn<A, R>): Handler<R> => {
  const decode = (task: Task): Result.Result<A, SkipRetry> => {
    const decoded = definition.decodePayload(task.payload)
    return Result.isFailure(decoded)
      ? Result.fail(
          new SkipRetry(
            `payload of task "${task.type}" does not match the schema of "${definition.type}": ${decoded.failure}`
          )
        )
      : Result.succeed(decoded.success)
  }
  // Built once: only a handler that declares the signal gets one (it is created when first read).
  return toHandler<R>(
    fn.length >= 3
      ? (task, signal) => {
          const d = decode(task)
          return Result.isFailure(d) ? Effect.fail(d.failure) : fn(d.success, task, signal)
        }
      : (task) => {
          const d = decode(task)
          return Result.isFailure(d) ? Effect.fail(d.failure) : fn(d.success, task, undefined as never)
        }
  )
}
