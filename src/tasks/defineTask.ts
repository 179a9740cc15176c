/**
 * `defineTask(type, payloadSchema, options?)`: a task type whose payload has an effect Schema.
 *
 *   const SendEmail = defineTask("email:send", Schema.Struct({ to: Schema.String }), { queue: "email" })
 *   await client.enqueue(SendEmail, { to: "a@b.c" })            // type-checked, validated, then written
 *   mux.handle(SendEmail, (payload, task) => send(payload.to)) // receives the decoded payload
 *
 * The payload is stored as JSON of the schema's JSON form (`Schema.toCodecJson`), so a Go asynq
 * producer can write it too; `SendEmail.jsonSchema()` is the contract to validate against.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { InvalidArgument } from "../broker/errors.js"
import type { EnqueueOptions } from "../steps/options.js"
import { payloadJson } from "../wire/payload.js"
import type { TaskDefinition } from "../steps/TaskDefinition.js"

export type { TaskDefinition } from "../steps/TaskDefinition.js"

/** A definition made from a Schema (which it keeps as `schema`). */
export interface SchemaTaskDefinition<S extends Schema.Codec<unknown, unknown>> extends TaskDefinition<S["Type"]> {
  readonly schema: S
}

const utf8 = new TextEncoder()
const jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

/**
 * A definition's default enqueue options: `EnqueueOptions`, whose `limitKey` may also be a
 * function of the payload (`(p) => \`customer:${p.customerId}\``), called at each enqueue that
 * gives no `limitKey` of its own.
 */
export type TaskOptions<A> = Omit<EnqueueOptions, "limitKey"> & {
  /** Limit key of every task of the type, or a function of the payload giving it (see `EnqueueOptions.limitKey`). */
  readonly limitKey?: string | ((payload: A) => string) | undefined
}

/**
 * Defines a task type with a typed payload. Throws InvalidArgument (`field: "type"`) when `type`
 * is empty or only whitespace.
 */
export const defineTask = <S extends Schema.Codec<any, any>>(
  type: string,
  payloadSchema: S,
  taskOptions?: TaskOptions<S["Type"]>
): SchemaTaskDefinition<S> => {
  if (typeof type !== "string" || type.trim() === "")
    throw new InvalidArgument({
      field: "type",
      message: "a task definition's type must be a non-empty string (not only whitespace)"
    })
  const json = Schema.toCodecJson(payloadSchema) as unknown as Schema.Codec<S["Type"], unknown>
  const encode = Schema.encodeUnknownResult(json)
  const decode = Schema.decodeUnknownResult(json)
  const invalid = (message: string) => Result.fail(new InvalidArgument({ field: "payload", message }))
  const keyOf = taskOptions?.limitKey
  let options: EnqueueOptions | undefined = taskOptions as EnqueueOptions | undefined
  if (typeof keyOf === "function") {
    const { limitKey: _, ...rest } = taskOptions!
    options = rest
  }
  return {
    _tag: "TaskDefinition",
    type,
    options,
    ...(typeof keyOf === "function" ? { limitKeyOf: keyOf } : {}),
    schema: payloadSchema,
    encodePayload: (payload) => {
      const encoded = encode(payload, { errors: "all" })
      if (Result.isFailure(encoded))
        return invalid(`payload of task "${type}" does not match its schema: ${encoded.failure.message}`)
      const value = encoded.success
      if (value === undefined) return Result.succeed(undefined)
      return Result.succeed(utf8.encode(JSON.stringify(value)))
    },
    decodePayload: (bytes) => {
      let value: unknown
      try {
        value = payloadJson(bytes)
      } catch (e) {
        return Result.fail(e instanceof Error ? e.message : String(e))
      }
      const decoded = decode(value, { errors: "all" })
      return Result.isFailure(decoded) ? Result.fail(decoded.failure.message) : Result.succeed(decoded.success)
    },
    jsonSchema: () => {
      const doc = Schema.toJsonSchemaDocument(payloadSchema)
      const defs = doc.definitions
      return { $schema: jsonSchemaDialect, ...doc.schema, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) }
    }
  }
}
