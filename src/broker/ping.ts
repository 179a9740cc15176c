import * as Effect from "effect/Effect"
import { Broker } from "./Broker.js"

/** PING Redis (the health check). */
export const ping = Effect.fn("Broker.ping")(function* () {
  const { redis } = yield* Broker
  yield* redis.use("ping", (c) => c.ping())
})
