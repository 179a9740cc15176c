/** Arranging queue state through the real steps, at a chosen time (TestClock), e.g. an hour ago. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { testRedisLayer } from "../support/redis.js"

export const brokerTestLayer = () => Broker.layer.pipe(Layer.provideMerge(testRedisLayer() as Layer.Layer<Redis>))

/** Runs steps against this file's database with the clock set to `atMs`. */
export const runAt = <A, E>(atMs: number, eff: Effect.Effect<A, E, Broker>): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(atMs)
      return yield* eff
    }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<A>
  )

/** Runs steps against this file's database with the real clock. */
export const runNow = <A, E>(eff: Effect.Effect<A, E, Broker>): Promise<A> =>
  Effect.runPromise(eff.pipe(Effect.provide(brokerTestLayer())) as Effect.Effect<A>)

/** Enqueues `n` tasks of type "job" (payload `{ i }`) to `queue`, with the given options. */
export const fillQueue = (queue: string, n: number, options: { timeout?: number; maxRetry?: number } = {}) =>
  runNow(
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => enqueue("job", { i }, { queue, ...options }),
      { discard: true }
    )
  )
