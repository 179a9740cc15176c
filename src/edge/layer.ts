/**
 * The Broker (and the Redis service) over HTTP as a Layer, for Effect code on edge runtimes: the
 * steps exported by `effect-asynq/edge` (enqueue … janitor, maintenanceTick) run with it unchanged.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Broker } from "../broker/Broker.js"
import { RedisConnectionError } from "../redis/errors.js"
import type { RedisService } from "../redis/RedisService.js"
import { edgeContext } from "./context.js"
import type { HttpRedisOptions, ScriptSources } from "../redis/httpRedis.js"
import { maintenanceScripts } from "./scripts.js"

/** Options of `httpRedisLayer`: the REST endpoint and token, and the Lua scripts the steps may run. */
export interface HttpRedisLayerOptions extends HttpRedisOptions {
  /** The Lua scripts the steps may run (default: `maintenanceScripts`, which covers enqueue and the tick's steps). */
  readonly scripts?: ScriptSources
}

/** Broker and Redis over the REST endpoint; fails with RedisConnectionError when the url or token is unusable. */
export const httpRedisLayer = (
  options: HttpRedisLayerOptions
): Layer.Layer<Broker | RedisService, RedisConnectionError> =>
  Layer.effectContext(
    Effect.suspend(() => {
      const context = edgeContext(options, options.scripts ?? maintenanceScripts)
      return context instanceof RedisConnectionError ? Effect.fail(context) : Effect.succeed(context)
    })
  )
