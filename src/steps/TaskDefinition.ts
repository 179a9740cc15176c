/**
 * A task definition: a task type with a typed payload contract and default enqueue options (made
 * by `defineTask`). The enqueue steps, the client and the ServeMux only call the functions it
 * carries, so they load no Schema code themselves.
 */
import type * as Result from "effect/Result"
import type { InvalidArgument } from "../broker/errors.js"
import type { EnqueueOptions } from "./options.js"

/** A task type with a payload schema and default options (made by `defineTask`). */
export interface TaskDefinition<A> {
  readonly _tag: "TaskDefinition"
  /** The task type written to Redis (asynq's `type`). */
  readonly type: string
  /** Default enqueue options; options given at enqueue time override them one by one. */
  readonly options: EnqueueOptions | undefined
  /** The limit key of a payload, when the definition's `limitKey` is a function (an enqueue's own `limitKey` wins). */
  readonly limitKeyOf?: (payload: A) => string
  /**
   * The payload's bytes: the value in the schema's JSON form, as JSON text (UTF-8). An invalid
   * value is an InvalidArgument (`field: "payload"`) with the schema's message; nothing throws.
   */
  readonly encodePayload: (payload: A) => Result.Result<Uint8Array | undefined, InvalidArgument>
  /** The payload decoded from a task's bytes, or why it does not match (not JSON, or the schema's message). */
  readonly decodePayload: (bytes: Uint8Array | undefined) => Result.Result<A, string>
  /** The payload's JSON Schema (draft 2020-12), for producers in other languages (e.g. Go asynq) to validate against. */
  readonly jsonSchema: () => Readonly<Record<string, unknown>>
}

/** Whether `u` is a task definition (rather than a plain task type string). */
export const isTaskDefinition = (u: unknown): u is TaskDefinition<unknown> =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "TaskDefinition"
