/** One attempt, driven directly (real Redis): a stop that lands while a handler's synchronous part runs. */
import { expect, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { makeAcker } from "../../src/processor/acker.js"
import { makeDeadlines } from "../../src/processor/deadlines.js"
import { toHandler } from "../../src/processor/Handler.js"
import { resolveOptions } from "../../src/processor/options.js"
import { makeRegistry } from "../../src/processor/registry.js"
import { makeActiveTask, runAttempt } from "../../src/processor/runAttempt.js"
import { makeMsg, putActive, readTask, testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

layer(testBrokerLayer())("runAttempt (real Redis)", (it) => {
  it.effect(
    "an async handler stopped during its synchronous part (shutdown) is given back at once, its signal aborted",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const msg = makeMsg("ra1", "stop-sync")
          yield* Effect.promise(() => putActive(c, msg, Math.floor(Date.now() / 1000) + 60))
          const registry = makeRegistry()
          let aborted: unknown
          // The handler's own synchronous part stops its task (as a shutdown reaching it right then would),
          // then returns a promise that never settles.
          const handler = toHandler((task, signal) => {
            registry.stop(task.id, "shutdown")
            signal.addEventListener("abort", () => (aborted = signal.reason))
            return new Promise<void>(() => {})
          })
          const deps = {
            options: yield* resolveOptions({ queues: { ra1: 1 } }),
            handler,
            registry,
            broker: yield* Broker,
            acker: makeAcker(),
            deadlines: yield* makeDeadlines
          }
          const now = yield* Clock.currentTimeMillis
          const entry = makeActiveTask(msg, now, now + 30_000)
          registry.add(entry)
          expect(yield* runAttempt(deps, entry)).toBe("requeued")
          expect(entry.onStop).toBeUndefined()
          expect(String((aborted as Error).message)).toBe("server shutting down")
          expect((yield* Effect.promise(() => readTask(c, "ra1", msg.id))).fields.state).toBe("pending")
        })
      )
  )
})
