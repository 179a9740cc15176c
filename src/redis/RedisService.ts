/**
 * The Redis service key, with no transport attached: the broker asks for it, and a layer provides
 * it — `Redis.layer` (ioredis over TCP, src/redis/Redis.ts) or the HTTP layer of
 * `effect-asynq/edge`. Kept apart from Redis.ts so that code depending on the key alone does not
 * import ioredis.
 */
import * as Context from "effect/Context"
import type { RedisShape } from "./Redis.js"

export class RedisService extends Context.Service<RedisService, RedisShape>()("effect-asynq/Redis") {}
