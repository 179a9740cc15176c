/**
 * The services an edge entry point runs its steps with: the broker over the HTTP transport, built
 * once per client (an isolate keeps it between requests). Bad options are not thrown at creation:
 * every call fails with the RedisConnectionError, as the TCP client's calls do when they cannot connect.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { Broker } from "../broker/Broker.js"
import { KnownQueues } from "../broker/knownQueues.js"
import { RedisConnectionError } from "../redis/errors.js"
import { RedisService } from "../redis/RedisService.js"
import { describeHttpTarget, type HttpRedisOptions, invalidHttpRedisOptions, makeHttpRedis, type ScriptSources } from "../redis/httpRedis.js"

export type EdgeServices = Broker | RedisService

/** The broker and Redis services over HTTP, or the error every call gets when the options are unusable. */
export const edgeContext = (options: HttpRedisOptions, scripts: ScriptSources): Context.Context<EdgeServices> | RedisConnectionError => {
  const invalid = invalidHttpRedisOptions(options ?? ({} as HttpRedisOptions))
  if (invalid !== undefined) {
    const target = describeHttpTarget(options?.url ?? "")
    return new RedisConnectionError({ target, message: `invalid Redis REST endpoint ${target}: ${invalid}` })
  }
  const redis = makeHttpRedis(options, scripts)
  return Context.make(RedisService, redis).pipe(Context.add(Broker, { redis, knownQueues: new KnownQueues() }))
}

/** Runs effects with an edge context (rejecting with its error when the options were unusable). */
export const edgeRunner = (options: HttpRedisOptions, scripts: ScriptSources) => {
  const context = edgeContext(options, scripts)
  return <A, E>(effect: Effect.Effect<A, E, EdgeServices>): Promise<A> =>
    context instanceof RedisConnectionError ? Promise.reject(context) : Effect.runPromise(Effect.provideContext(effect, context))
}
