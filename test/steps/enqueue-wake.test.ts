/** enqueue publishes the queue name on effect-asynq:wake when a queue's pending list becomes non-empty. */
import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { wakeChannel } from "../../src/wire/keys.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"

let sub: IORedis
const heard: Array<string> = []
beforeAll(async () => {
  await flushTestDb()
  sub = rawClient()
  await sub.subscribe(wakeChannel)
  // Pub/sub is server-wide: keep only this file's queues.
  sub.on("message", (_channel, queue) => queue.startsWith("wake-") && heard.push(queue))
})
afterAll(() => sub.disconnect())

const run = <A, E>(eff: Effect.Effect<A, E, Broker>) => Effect.runPromise(eff.pipe(Effect.provide(testBrokerLayer())) as Effect.Effect<A>)
const settle = () => new Promise((r) => setTimeout(r, 100))

it("publishes once when a queue goes from empty to non-empty, not for every task", async () => {
  await run(enqueue("t", "a", { queue: "wake-a" }))
  await run(enqueue("t", "b", { queue: "wake-a" }))
  await run(enqueueMany([{ type: "t", payload: "c", options: { queue: "wake-a" } }, { type: "t", payload: "d", options: { queue: "wake-b" } }]))
  await settle()
  expect(heard.sort()).toEqual(["wake-a", "wake-b"])

  // Scheduled tasks are not pending yet: no wake-up.
  await run(enqueue("t", "e", { queue: "wake-c", processIn: 60_000 }))
  // Once wake-a is drained, the next enqueue wakes again.
  await run(dequeueLease({ queues: ["wake-a"], count: 10 }))
  await run(enqueue("t", "f", { queue: "wake-a" }))
  await settle()
  expect(heard.sort()).toEqual(["wake-a", "wake-a", "wake-b"])
})
