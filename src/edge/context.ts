/**
 * The services an edge entry point runs its steps with: the broker over the HTTP transport, built
 * once per client (an isolate keeps it between requests). Bad options are not thrown at creation:
 * every call fails with the RedisConnectionError, as the TCP client's calls do when they cannot connect.
 */
import { MessageSizes } from "../broker/messageSizes.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { Broker } from "../broker/Broker.js"
import { KnownQueues } from "../broker/knownQueues.js"
import { CommandTimeout, RedisConnectionError, redisError } from "../redis/errors.js"
import { RedisService } from "../redis/RedisService.js"
import {
  defaultHttpTimeoutMs,
  describeHttpTarget,
  type HttpRedisOptions,
  invalidHttpRedisOptions,
  makeHttpRedis,
  type ScriptSources
} from "../redis/httpRedis.js"

export type EdgeServices = Broker | RedisService

/** The broker and Redis services over HTTP, or the error every call gets when the options are unusable. */
export const edgeContext = (
  options: HttpRedisOptions,
  scripts: ScriptSources,
  requestTimeoutMs?: number
): Context.Context<EdgeServices> | RedisConnectionError => {
  const invalid = invalidHttpRedisOptions(options ?? ({} as HttpRedisOptions))
  if (invalid !== undefined) {
    const target = describeHttpTarget(options?.url ?? "")
    return new RedisConnectionError({ target, message: `invalid Redis REST endpoint ${target}: ${invalid}` })
  }
  const redis = makeHttpRedis(options, scripts, requestTimeoutMs)
  return Context.make(RedisService, redis).pipe(
    Context.add(Broker, { redis, knownQueues: new KnownQueues(), messageSizes: new MessageSizes() })
  )
}

/** Runs effects with an edge context (rejecting with its error when the options were unusable). */
export const edgeRunner = (options: HttpRedisOptions, scripts: ScriptSources) => {
  const context = edgeContext(options, scripts)
  return <A, E>(effect: Effect.Effect<A, E, EdgeServices>): Promise<A> =>
    context instanceof RedisConnectionError
      ? Promise.reject(context)
      : Effect.runPromise(Effect.provideContext(effect, context))
}

/**
 * Runs each call with an edge context, the whole call bounded by `timeoutMs` (resends included):
 * each request gets a third of it, so a lost reply is sent again within the call's time. A call
 * still running then fails with a RedisError (op `op`) whose cause is a CommandTimeout naming the endpoint.
 */
export const boundedEdgeRunner = (options: HttpRedisOptions, scripts: ScriptSources) => {
  const timeoutMs = options?.timeoutMs ?? defaultHttpTimeoutMs
  const context = edgeContext(options, scripts, Math.max(1, Math.floor(timeoutMs / 3)))
  const target = describeHttpTarget(options?.url ?? "")
  return <A, E>(op: string, effect: Effect.Effect<A, E, EdgeServices>): Promise<A> =>
    context instanceof RedisConnectionError
      ? Promise.reject(context)
      : Effect.runPromise(
          Effect.provideContext(effect, context).pipe(
            Effect.timeoutOrElse({
              duration: timeoutMs,
              orElse: () =>
                Effect.fail(
                  redisError(op, new CommandTimeout(target, timeoutMs, "timeoutMs", "the whole call, resends included"))
                )
            })
          )
        )
}
