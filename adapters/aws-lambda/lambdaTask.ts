import type { LambdaClient } from "@aws-sdk/client-lambda"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { Task } from "../../src/processor/Task.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"
import { lambdaSdk } from "./lambdaSdk.js"

/** The task invoking a Lambda function failed: the function threw (`functionError`) or the call did not go through. */
export class LambdaTaskError extends Data.TaggedError("LambdaTaskError")<{
  readonly functionName: string
  /** Lambda's X-Amz-Function-Error ("Unhandled" / "Handled"), or undefined when the invoke call itself failed. */
  readonly functionError: string | undefined
  readonly errorType: string | undefined
  readonly message: string
}> {}

/** The event the invoked function receives for one task. */
export interface LambdaTaskEvent {
  readonly id: string
  readonly type: string
  readonly queue: string
  /** The payload parsed as JSON when it is JSON, else null (see payloadBase64). */
  readonly payload: unknown
  readonly payloadBase64: string | null
  readonly retried: number
  readonly maxRetry: number
  readonly headers: Readonly<Record<string, string>>
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return null
  }
}

/** The event `invokeLambdaTask` sends to the function that runs a task: its id, type, queue, payload (parsed JSON, or null, and base64), retry counts and headers. */
export const lambdaTaskEvent = (msg: TaskMessage): LambdaTaskEvent => {
  const bytes =
    msg.payload === undefined
      ? undefined
      : Buffer.from(msg.payload.buffer, msg.payload.byteOffset, msg.payload.byteLength)
  return {
    id: msg.id,
    type: msg.type,
    queue: msg.queue,
    payload: bytes === undefined ? null : parseJson(bytes.toString("utf8")),
    payloadBase64: bytes === undefined ? null : bytes.toString("base64"),
    retried: msg.retried,
    maxRetry: msg.retry,
    headers: msg.headers
  }
}

/** Which Lambda function runs the tasks, and how the synchronous Invoke call is made. */
export interface LambdaTaskConfig {
  /** Function name, ARN or name:alias. */
  readonly functionName: string
  readonly qualifier?: string
}

/**
 * A handler (for `Server.start`, `runWorker` or the processor drain) that runs a task by invoking a
 * Lambda function synchronously (RequestResponse). Succeeds with the function's response bytes; a
 * function error (the function threw) or a failed call becomes a LambdaTaskError, which the
 * processor treats like any handler failure (retry, then archive). When the attempt is stopped
 * (timeout, cancel, shutdown) the HTTP call is aborted. Without @aws-sdk/client-lambda installed
 * every attempt fails with a LambdaTaskError (errorType "MissingPeerDependency") saying so.
 */
export const invokeLambdaTask = (config: LambdaTaskConfig, lambda: LambdaClient) =>
  Effect.fn("Lambda.invokeTask")(function* (task: Task) {
    const msg = task.message
    const fail = (functionError: string | undefined, errorType: string | undefined, message: string) =>
      new LambdaTaskError({ functionName: config.functionName, functionError, errorType, message })
    const { InvokeCommand } = yield* lambdaSdk("effect-asynq/aws-lambda/lambdaTask").pipe(
      Effect.mapError((missing) => fail(undefined, missing._tag, missing.message))
    )
    const out = yield* Effect.tryPromise({
      try: (signal) =>
        lambda.send(
          new InvokeCommand({
            FunctionName: config.functionName,
            InvocationType: "RequestResponse",
            Payload: new TextEncoder().encode(JSON.stringify(lambdaTaskEvent(msg))),
            ...(config.qualifier === undefined ? {} : { Qualifier: config.qualifier })
          }),
          { abortSignal: signal }
        ),
      catch: (e) =>
        fail(
          undefined,
          e instanceof Error ? e.name : undefined,
          `invoking ${config.functionName} failed: ${e instanceof Error ? e.message : String(e)}`
        )
    })
    const body = out.Payload === undefined ? "" : new TextDecoder().decode(out.Payload)
    if (out.FunctionError !== undefined) {
      const err = parseJson(body) as { errorType?: unknown; errorMessage?: unknown } | null
      const errorType = typeof err?.errorType === "string" ? err.errorType : undefined
      const detail = typeof err?.errorMessage === "string" ? err.errorMessage : body
      return yield* fail(
        out.FunctionError,
        errorType,
        `${config.functionName} failed (${errorType ?? out.FunctionError}): ${detail}`
      )
    }
    return out.Payload
  })
