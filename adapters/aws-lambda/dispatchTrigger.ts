/**
 * Dispatch on enqueue: a hook for the enqueue endpoint's `onQueueStarted` that invokes the
 * dispatcher function (InvocationType "Event": Lambda queues it and answers at once) when an
 * enqueue took a queue from empty to non-empty, so a processor starts within seconds rather than
 * at the next scheduled dispatch.
 *
 *   createEnqueueHandler({ auth, onQueueStarted: invokeOnQueueStarted({ functionName: process.env.DISPATCHER_FUNCTION! }) })
 *
 * Imports @aws-sdk/client-lambda (only this module and the dispatcher do): an enqueue function
 * that does not use it does not bundle the SDK.
 */
import type { LambdaClient, LambdaClientConfig } from "@aws-sdk/client-lambda"
import { InvalidArgument } from "../../src/broker/errors.js"
import { importLambdaSdk } from "./lambdaSdk.js"

/** Which dispatcher `invokeOnQueueStarted` invokes, and how long one Invoke call may take. */
export interface QueueStartedTriggerConfig {
  /** The function to invoke: the dispatcher (name, ARN or name:alias). */
  readonly functionName: string
  /** A Lambda client, or the config to build one (default: region and credentials from the environment). */
  readonly lambda?: LambdaClient | LambdaClientConfig
  /** Longest wait for the Invoke call, SDK retries included (default 2000 ms); then it is aborted and reported. */
  readonly requestTimeoutMs?: number
}

/** The event the dispatcher receives from this trigger. */
export interface QueueStartedEvent {
  readonly source: "effect-asynq.enqueue"
  readonly queue: string
}

const isLambdaClient = (lambda: LambdaClient | LambdaClientConfig): lambda is LambdaClient =>
  typeof (lambda as { readonly send?: unknown }).send === "function"

/** The hook: invokes `functionName` asynchronously with a QueueStartedEvent; rejects when Lambda did not accept it. */
export const invokeOnQueueStarted = (config: QueueStartedTriggerConfig): ((queue: string) => Promise<void>) => {
  if (typeof config.functionName !== "string" || config.functionName.trim() === "")
    throw new InvalidArgument({
      field: "functionName",
      message:
        "invokeOnQueueStarted: functionName is empty; set it to the dispatcher's name or ARN (is its environment variable defined?)"
    })
  const timeoutMs = config.requestTimeoutMs ?? 2000
  const given = config.lambda ?? {}
  let client:
    | Promise<{ readonly lambda: LambdaClient; readonly sdk: typeof import("@aws-sdk/client-lambda") }>
    | undefined
  const ready = () =>
    (client ??= importLambdaSdk("effect-asynq/aws-lambda/dispatchTrigger").then((sdk) => ({
      sdk,
      lambda: isLambdaClient(given) ? given : new sdk.LambdaClient(given)
    })))
  return async (queue) => {
    const { sdk, lambda } = await ready()
    const event: QueueStartedEvent = { source: "effect-asynq.enqueue", queue }
    const out = await lambda.send(
      new sdk.InvokeCommand({
        FunctionName: config.functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify(event))
      }),
      { abortSignal: AbortSignal.timeout(timeoutMs) }
    )
    if (out.StatusCode !== 202)
      throw new Error(`invoking ${config.functionName}: unexpected status ${out.StatusCode ?? "none"}`)
  }
}
