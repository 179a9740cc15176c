import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { queueDepths } from "../../src/broker/queueDepths.js"
import type { RedisError } from "../../src/redis/errors.js"
import { enqueue, type EnqueueError } from "../../src/steps/enqueue.js"
import type { TaskInfo } from "../../src/steps/taskInfo.js"
import { enqueueSigned } from "../../src/steps/enqueueSigned.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { type AcceptedSignature, type AuthConfig, verifyAuth } from "./auth.js"
import { type EnqueueBody, parseEnqueueBody, parseInstant } from "./enqueueBody.js"
import { backendUnavailable, HttpProblem, jsonResponse, type JsonResponse, problemResponse } from "./httpProblem.js"
import { taskInfoToJson } from "./taskInfoJson.js"
import type { WarmRuntime } from "./warmRuntime.js"

/** What an enqueue endpoint accepts. */
export interface EnqueueEndpointConfig {
  readonly auth: AuthConfig
  /** Queues callers may enqueue to (default: any). Others get 403. */
  readonly allowedQueues?: ReadonlyArray<string>
  /** Task types callers may enqueue (default: any). Others get 403. */
  readonly allowedTypes?: ReadonlyArray<string>
  /** Largest body accepted, in bytes (default 1 MiB). Larger ones get 413. */
  readonly maxBodyBytes?: number
  /** Where server-side errors go (e.g. why Redis is unreachable; never sent to the caller). Default console.error. */
  readonly log?: (line: string) => void
  /**
   * Dispatch on enqueue: called after an enqueue made a queue go from empty to non-empty (the new
   * task is the only one pending), e.g. to invoke the dispatcher at once
   * (`invokeOnQueueStarted` from effect-asynq/aws-lambda/dispatchTrigger), so a processor starts
   * within seconds instead of at the next scheduled dispatch. Awaited before the answer; a
   * failure is logged and does not fail the enqueue (the task is stored; the schedule still runs).
   */
  readonly onQueueStarted?: (queue: string) => Promise<unknown> | unknown
}

/** The parts of an HTTP request the endpoint reads (both cloud adapters build one). */
export interface EnqueueHttpRequest {
  readonly method: string
  /** The URL path the function received (a query string is ignored); HMAC signatures cover it. */
  readonly path: string
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The raw body bytes, exactly as sent (HMAC signatures are over these bytes). */
  readonly body: Uint8Array
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

/** A request that passed every check that needs no Redis: what to enqueue, and the signature to claim. */
export interface AcceptedEnqueue {
  readonly type: string
  readonly payload: unknown
  readonly options: EnqueueOptions
  readonly signature: AcceptedSignature | undefined
}

/**
 * Everything that needs no Redis, in order: method (405), size (413), credentials (401), body (400),
 * allow-lists (403). Runs before any connection is opened, so a caller without valid credentials
 * never makes the function touch Redis.
 */
export const checkEnqueueRequest = (
  config: EnqueueEndpointConfig,
  req: EnqueueHttpRequest
): Effect.Effect<AcceptedEnqueue, HttpProblem> =>
  Effect.gen(function* () {
    if (req.method.toUpperCase() !== "POST")
      return yield* new HttpProblem({
        status: 405,
        code: "method_not_allowed",
        message: `method ${req.method} not allowed: use POST`
      })
    const max = config.maxBodyBytes ?? 1024 * 1024
    if (req.body.byteLength > max)
      return yield* new HttpProblem({
        status: 413,
        code: "body_too_large",
        message: `request body is larger than ${max} bytes`
      })
    const signature = yield* verifyAuth(config.auth, req)
    const body = yield* parseEnqueueBody(Buffer.from(req.body).toString("utf8"))
    const options = body.options === undefined ? {} : yield* toOptions(body.options)
    const queue = options.queue ?? "default"
    if (config.allowedQueues && !config.allowedQueues.includes(queue))
      return yield* forbidden(`queue "${queue}" is not accepted by this endpoint`)
    if (config.allowedTypes && !config.allowedTypes.includes(body.type))
      return yield* forbidden(`task type "${body.type}" is not accepted by this endpoint`)
    const payload =
      body.payloadBase64 !== undefined ? new Uint8Array(Buffer.from(body.payloadBase64, "base64")) : body.payload
    return { type: body.type, payload, options, signature }
  })

/** An answer, and the queue the enqueue started (took from empty to one pending task), if asked to tell. */
export interface EnqueueAnswer {
  readonly response: JsonResponse
  readonly startedQueue: string | undefined
}

const refusalProblems = {
  InvalidArgument: (e: { readonly message: string }) =>
    Effect.fail(new HttpProblem({ status: 400, code: "invalid_argument", message: e.message })),
  DuplicateTask: (e: { readonly message: string }) =>
    Effect.fail(new HttpProblem({ status: 409, code: "duplicate_task", message: e.message })),
  TaskIdConflict: (e: { readonly message: string }) =>
    Effect.fail(new HttpProblem({ status: 409, code: "task_id_conflict", message: e.message }))
}

/**
 * The task of an accepted request: a signed request once per signature (the task and the
 * signature's record in one step; the same signed request again gets the first answer, with the
 * header `x-asynq-replayed: true`, and writes nothing), any other request as a plain enqueue.
 */
const jsonHeaders: Readonly<Record<string, string>> = { "content-type": "application/json" }
const replayedHeaders: Readonly<Record<string, string>> = {
  "content-type": "application/json",
  "x-asynq-replayed": "true"
}

const writeAccepted = (
  accepted: AcceptedEnqueue
): Effect.Effect<{ readonly response: JsonResponse; readonly info: TaskInfo | undefined }, EnqueueError, Broker> => {
  const { signature } = accepted
  if (signature === undefined)
    return Effect.map(enqueue(accepted.type, accepted.payload, accepted.options), (info) => ({
      response: jsonResponse(200, taskInfoToJson(info)),
      info
    }))
  return Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    Effect.map(
      enqueueSigned(
        accepted.type,
        accepted.payload,
        accepted.options,
        { signatureHex: signature.signature, validForMs: signature.expiresAtMs - nowMs },
        (info) => JSON.stringify(taskInfoToJson(info))
      ),
      (done) => ({
        response: { status: 200, headers: done.replayed ? replayedHeaders : jsonHeaders, body: done.answer },
        info: done.replayed ? undefined : done.prepared
      })
    )
  )
}

/**
 * Enqueues an accepted request: 200 + TaskInfo (for a signed request sent again, the first answer),
 * or 400/409. Redis errors stay in the error channel. With `detectStart`, a pending task's queue
 * depth is read after the write (one more round trip) to tell whether this enqueue started the queue.
 */
export const enqueueAccepted = (
  accepted: AcceptedEnqueue,
  detectStart = false
): Effect.Effect<EnqueueAnswer, RedisError, Broker> =>
  Effect.gen(function* () {
    const { response, info } = yield* writeAccepted(accepted).pipe(Effect.catchTags(refusalProblems))
    let startedQueue: string | undefined
    if (detectStart && info !== undefined && info.state === "pending") {
      const [depth] = yield* queueDepths([info.queue])
      if (depth !== undefined && !depth.paused && depth.pending <= 1) startedQueue = info.queue
    }
    return { response, startedQueue }
  }).pipe(
    Effect.catchTag("HttpProblem", (p) => Effect.succeed({ response: problemResponse(p), startedQueue: undefined }))
  )

/**
 * Answers one enqueue request: 200 + TaskInfo, or 4xx/5xx + `{ error: { code, message } }`. Never
 * rejects. The checks run first without the runtime (no Redis connection); only an accepted request
 * is run on `runtime`. A Redis failure answers 503 with a generic message and logs its cause.
 */
export const handleEnqueueRequest = async (
  config: EnqueueEndpointConfig,
  runtime: WarmRuntime<Broker | Redis>,
  req: EnqueueHttpRequest,
  budgetMs?: number
): Promise<JsonResponse> => {
  const checked = await Effect.runPromise(
    checkEnqueueRequest(config, req).pipe(
      Effect.map((accepted) => ({ accepted })),
      Effect.catchTag("HttpProblem", (p) => Effect.succeed({ refused: problemResponse(p) }))
    )
  )
  if ("refused" in checked) return checked.refused
  let answer: EnqueueAnswer
  try {
    answer = await runtime.run(enqueueAccepted(checked.accepted, config.onQueueStarted !== undefined), { budgetMs })
  } catch (e) {
    // The connection could not be opened, a command failed or timed out (RedisError), or the
    // invocation's time ran out (InvocationTimeout).
    return backendUnavailable("enqueue", e, config.log)
  }
  if (answer.startedQueue !== undefined && config.onQueueStarted !== undefined) {
    try {
      await config.onQueueStarted(answer.startedQueue)
    } catch (e) {
      ;(config.log ?? console.error)(
        JSON.stringify({
          msg: "effect-asynq enqueue: onQueueStarted failed (the task is stored; the scheduled dispatch will start it)",
          queue: answer.startedQueue,
          error: e instanceof Error ? `${e.name}: ${e.message}` : String(e)
        })
      )
    }
  }
  return answer.response
}
