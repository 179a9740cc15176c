/** Runs inspector Effects against this test file's Redis database, optionally at a fixed clock time. */
import { Effect, Layer, ManagedRuntime } from "effect"
import { TestClock } from "effect/testing"
import { Broker } from "../../src/broker/Broker.js"
import { afterAll, beforeEach } from "vitest"
import { flushTestDb, rawClient, testRedisLayer } from "../support/redis.js"

export const makeHarness = () => {
  const rt = ManagedRuntime.make(Broker.layer.pipe(Layer.provide(testRedisLayer())))
  /** Runs `eff`; with `nowMs` the Effect Clock reads that time (TestClock), else the real time. */
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>, nowMs?: number): Promise<A> =>
    rt.runPromise(
      nowMs === undefined
        ? eff
        : Effect.gen(function* () {
            yield* TestClock.setTime(nowMs)
            return yield* eff
          }).pipe(Effect.provide(TestClock.layer()))
    )
  /** The failure of `eff` (its tagged error), or throws if it succeeded. */
  const fail = async <A, E>(eff: Effect.Effect<A, E, Broker>, nowMs?: number): Promise<E> =>
    run(Effect.flip(eff), nowMs)
  return { run, fail, dispose: () => rt.dispose() }
}

/** The fixed time the inspector tests arrange tasks around. */
export const now = Date.UTC(2026, 10, 22, 12, 0, 0)
export const nowSec = now / 1000

/**
 * The usual setup of an inspector test file: a harness, a raw client on the file's database
 * (emptied before each test), both closed after the file.
 */
export const inspectorTestDb = () => {
  const h = makeHarness()
  const c = rawClient()
  beforeEach(() => flushTestDb())
  afterAll(async () => {
    c.disconnect()
    await h.dispose()
  })
  return { h, c }
}
