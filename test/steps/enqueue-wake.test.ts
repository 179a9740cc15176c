/** enqueue publishes the queue name on effect-asynq:wake when a queue's pending list becomes non-empty. */
import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { wakeChannel } from "../../src/wire/keys.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

let sub: IORedis
let pub: IORedis
const heard: Array<string> = []
const markersHeard: Array<string> = []
beforeAll(async () => {
  await flushTestDb()
  sub = rawClient()
  pub = rawClient()
  await sub.subscribe(wakeChannel)
  // Pub/sub is server-wide: keep only this file's queues (and its markers).
  sub.on("message", (_channel, queue) => {
    if (queue.startsWith("enqueue-wake-marker-")) markersHeard.push(queue)
    else if (queue.startsWith("wake-")) heard.push(queue)
  })
})
afterAll(() => {
  sub.disconnect()
  pub.disconnect()
})

const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.runPromise(eff.pipe(Effect.provide(testBrokerLayer())) as Effect.Effect<A>)

/**
 * Waits until every wake-up published so far has reached the subscriber: Redis delivers a
 * subscriber's messages in the order they were published, so once a marker published now arrives,
 * all earlier messages have arrived too (and any missing one was never published).
 */
let markers = 0
const allPublishedHeard = async () => {
  const marker = `enqueue-wake-marker-${++markers}`
  await pub.publish(wakeChannel, marker)
  await waitFor(
    `the pub/sub marker ${marker}`,
    () => markersHeard,
    (m) => m.includes(marker)
  )
}

it("publishes once when a queue goes from empty to non-empty, not for every task", async () => {
  await run(enqueue("t", "a", { queue: "wake-a" }))
  await run(enqueue("t", "b", { queue: "wake-a" }))
  await run(
    enqueueMany([
      { type: "t", payload: "c", options: { queue: "wake-a" } },
      { type: "t", payload: "d", options: { queue: "wake-b" } }
    ])
  )
  await allPublishedHeard()
  expect(heard.sort()).toEqual(["wake-a", "wake-b"])

  // Scheduled tasks are not pending yet: no wake-up.
  await run(enqueue("t", "e", { queue: "wake-c", processIn: 60_000 }))
  // Once wake-a is drained, the next enqueue wakes again.
  await run(dequeueLease({ queues: ["wake-a"], count: 10 }))
  await run(enqueue("t", "f", { queue: "wake-a" }))
  await allPublishedHeard()
  expect(heard.sort()).toEqual(["wake-a", "wake-a", "wake-b"])

  // Many tasks of one empty queue in one call (one enqueueBatch): one wake-up; into a non-empty queue: none.
  await run(
    enqueueMany(Array.from({ length: 5 }, (_, i) => ({ type: "t", payload: `g${i}`, options: { queue: "wake-d" } })))
  )
  await run(
    enqueueMany(Array.from({ length: 5 }, (_, i) => ({ type: "t", payload: `h${i}`, options: { queue: "wake-d" } })))
  )
  await allPublishedHeard()
  expect(heard.sort()).toEqual(["wake-a", "wake-a", "wake-b", "wake-d"])
})
