/**
 * Completing a `DurableDeferred` from outside any workflow, by its token (`DurableDeferred.token`
 * inside the workflow, or `DurableDeferred.tokenFromPayload` anywhere): an HTTP handler, a webhook,
 * a Promise-only service. It needs only Redis, neither the engine layer nor a worker: the exit is
 * stored in the execution's hash (the first completion wins) and the execution is woken.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type * as DurableDeferred from "effect/workflow/DurableDeferred"
import { TokenParsed } from "effect/workflow/DurableDeferred"
import type { Broker } from "../broker/Broker.js"
import { InvalidArgument } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import type { RedisOptions } from "../redis/options.js"
import { makeBrokerRuntime } from "../runtime/promiseRuntime.js"
import { encodeExit } from "./codec.js"
import { resolve, wakeExecution, type WorkflowLayerOptions } from "./engine.js"

/** Where the executions live: the same `queue` and `shards` as the engine layer's. */
export type ControlQueueOptions = Pick<WorkflowLayerOptions, "queue" | "shards">

/**
 * Completes a deferred by its token with an exit of the deferred's types (encoded with its
 * schemas). `true`: recorded, and the execution woken; `false`: the deferred was completed
 * before (the first completion wins; nothing changed). InvalidArgument for a token that is not a
 * deferred token or an exit its schemas reject.
 */
export const completeDeferred = Effect.fn("Workflow.completeDeferred")(function* <
  S extends Schema.Top,
  E extends Schema.Top
>(
  deferred: DurableDeferred.DurableDeferred<S, E>,
  options: ControlQueueOptions & { readonly token: string; readonly exit: Exit.Exit<S["Type"], E["Type"]> }
): Effect.fn.Return<boolean, InvalidArgument | RedisError, Broker> {
  const token = yield* Effect.try({
    try: () => TokenParsed.fromString(options.token),
    catch: () =>
      new InvalidArgument({
        field: "token",
        message: `not a DurableDeferred token: ${JSON.stringify(options.token.slice(0, 80))}`
      })
  })
  if (token.deferredName !== deferred.name) {
    return yield* new InvalidArgument({
      field: "token",
      message: `the token is for deferred "${token.deferredName}", not "${deferred.name}"`
    })
  }
  const encoded = yield* Schema.encodeEffect(
    deferred.exitSchema as unknown as Schema.Codec<Exit.Exit<unknown, unknown>, Exit.Exit<unknown, unknown>>
  )(options.exit).pipe(
    Effect.mapError(
      (e) =>
        new InvalidArgument({
          field: "exit",
          message: `the exit does not fit deferred "${deferred.name}": ${e.message}`
        })
    )
  )
  const json = yield* encodeExit(encoded)
  const outcome = yield* wakeExecution(
    yield* resolve(options),
    token.workflowName,
    token.executionId,
    `d:${token.deferredName}`,
    json,
    "a"
  )
  return outcome !== "already-set"
})

/** The Promise form of the outside completions (no Effect needed): one Redis connection, opened on first use. */
export interface DeferredClient {
  /** Completes the deferred with a value; `true` recorded, `false` completed before. Rejects with InvalidArgument or RedisError. */
  readonly succeed: <S extends Schema.Top, E extends Schema.Top>(
    deferred: DurableDeferred.DurableDeferred<S, E>,
    token: string,
    value: S["Type"]
  ) => Promise<boolean>
  /** Completes the deferred with a typed failure. */
  readonly fail: <S extends Schema.Top, E extends Schema.Top>(
    deferred: DurableDeferred.DurableDeferred<S, E>,
    token: string,
    error: E["Type"]
  ) => Promise<boolean>
  /** Closes the connection (idempotent). */
  readonly close: () => Promise<void>
}

/** A Promise client that completes deferreds by token (Redis from `redis`, else REDIS_URL, else localhost). */
export const createDeferredClient = (
  options: ControlQueueOptions & { readonly redis?: RedisOptions | string | undefined } = {}
): DeferredClient => {
  const { redis, ...queues } = options
  const runtime = makeBrokerRuntime(redis)
  return {
    succeed: (deferred, token, value) =>
      runtime.run(completeDeferred(deferred, { ...queues, token, exit: Exit.succeed(value) })),
    fail: (deferred, token, error) =>
      runtime.run(completeDeferred(deferred, { ...queues, token, exit: Exit.fail(error) })),
    close: runtime.close
  }
}
