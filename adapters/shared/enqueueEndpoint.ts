import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import { enqueue } from "../../src/steps/enqueue.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { type AuthConfig, verifyAuth } from "./auth.js"
import { type EnqueueBody, parseEnqueueBody, parseInstant } from "./enqueueBody.js"
import { HttpProblem, jsonResponse, type JsonResponse, problemResponse } from "./httpProblem.js"
import { taskInfoToJson } from "./taskInfoJson.js"

/** What an enqueue endpoint accepts. */
export interface EnqueueEndpointConfig {
  readonly auth: AuthConfig
  /** Queues callers may enqueue to (default: any). Others get 403. */
  readonly allowedQueues?: ReadonlyArray<string>
  /** Task types callers may enqueue (default: any). Others get 403. */
  readonly allowedTypes?: ReadonlyArray<string>
  /** Largest body accepted, in bytes (default 1 MiB). Larger ones get 413. */
  readonly maxBodyBytes?: number
}

/** The parts of an HTTP request the endpoint reads (both cloud adapters build one). */
export interface EnqueueHttpRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The raw body text, exactly as sent (HMAC signatures are over these bytes). */
  readonly body: string
}

const toOptions = (o: NonNullable<EnqueueBody["options"]>): Effect.Effect<EnqueueOptions, HttpProblem> =>
  Effect.gen(function* () {
    const out: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {}
    if (o.queue !== undefined) out.queue = o.queue
    if (o.maxRetry !== undefined) out.maxRetry = o.maxRetry
    if (o.timeout !== undefined) out.timeout = o.timeout
    if (o.deadline !== undefined) out.deadline = yield* parseInstant("deadline", o.deadline)
    if (o.unique !== undefined) out.unique = o.unique
    if (o.processAt !== undefined) out.processAt = yield* parseInstant("processAt", o.processAt)
    if (o.processIn !== undefined) out.processIn = o.processIn
    if (o.taskId !== undefined) out.taskId = o.taskId
    if (o.retention !== undefined) out.retention = o.retention
    if (o.group !== undefined) out.group = o.group
    if (o.headers !== undefined) out.headers = o.headers
    return out
  })

const forbidden = (message: string) => new HttpProblem({ status: 403, code: "forbidden", message })

/** Answers one enqueue request: 200 + TaskInfo, or 4xx/5xx + `{ error: { code, message } }`. Never fails. */
export const handleEnqueueRequest = (
  config: EnqueueEndpointConfig,
  req: EnqueueHttpRequest
): Effect.Effect<JsonResponse, never, Broker> =>
  Effect.gen(function* () {
    if (req.method.toUpperCase() !== "POST")
      return yield* new HttpProblem({ status: 405, code: "method_not_allowed", message: `method ${req.method} not allowed: use POST` })
    const max = config.maxBodyBytes ?? 1024 * 1024
    if (Buffer.byteLength(req.body) > max)
      return yield* new HttpProblem({ status: 413, code: "body_too_large", message: `request body is larger than ${max} bytes` })
    yield* verifyAuth(config.auth, req.headers, req.body)
    const body = yield* parseEnqueueBody(req.body)
    const options = body.options === undefined ? {} : yield* toOptions(body.options)
    const queue = options.queue ?? "default"
    if (config.allowedQueues && !config.allowedQueues.includes(queue)) return yield* forbidden(`queue "${queue}" is not accepted by this endpoint`)
    if (config.allowedTypes && !config.allowedTypes.includes(body.type)) return yield* forbidden(`task type "${body.type}" is not accepted by this endpoint`)
    const payload = body.payloadBase64 !== undefined ? new Uint8Array(Buffer.from(body.payloadBase64, "base64")) : body.payload
    const info = yield* enqueue(body.type, payload, options).pipe(
      Effect.catchTags({
        InvalidArgument: (e) => Effect.fail(new HttpProblem({ status: 400, code: "invalid_argument", message: e.message })),
        DuplicateTask: (e) => Effect.fail(new HttpProblem({ status: 409, code: "duplicate_task", message: e.message })),
        TaskIdConflict: (e) => Effect.fail(new HttpProblem({ status: 409, code: "task_id_conflict", message: e.message })),
        RedisError: (e) => Effect.fail(new HttpProblem({ status: 503, code: "redis_unavailable", message: `could not enqueue: ${e.message}` }))
      })
    )
    return jsonResponse(200, taskInfoToJson(info))
  }).pipe(Effect.catchTag("HttpProblem", (p) => Effect.succeed(problemResponse(p))))
