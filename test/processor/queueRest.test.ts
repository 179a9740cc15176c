/**
 * Resting failed queues (the fetcher on a Redis Cluster, src/processor/queueRest.ts): a queue that
 * failed is left out of the fetch order until a background probe (one read on its slot) gets an
 * answer; the probes are spaced on Effect's Clock (TestClock here) against real Redis.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { firstProbeMs, makeQueueRest } from "../../src/processor/queueRest.js"
import { testBrokerLayer } from "../support/arrange.js"
import { waitForEffect } from "../support/waitFor.js"

layer(testBrokerLayer())("queueRest (real Redis, TestClock)", (it) => {
  it.effect("a failed queue is left out until its probe answers; when every queue rests, all are visited", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const rest = makeQueueRest()
        const order = ["a", "down", "b"]
        expect(rest.usable(order)).toEqual(order)
        yield* rest.failed([{ queue: "down", error: "Too many Cluster redirections" }])
        expect(rest.usable(order)).toEqual(["a", "b"])
        // A second failure of a resting queue starts no second probe, and changes nothing.
        yield* rest.failed([{ queue: "down", error: "again" }])
        expect(rest.usable(order)).toEqual(["a", "b"])
        // Every queue of the order rests: the fetch visits them all.
        expect(rest.usable(["down"])).toEqual(["down"])
        // Before the first probe is due nothing changes; once it is due and Redis answers, the queue is back.
        yield* TestClock.adjust(firstProbeMs - 1)
        expect(rest.usable(order)).toEqual(["a", "b"])
        // (firstProbeMs more, not 1: due by then even if the probe began its sleep only after the first step)
        yield* TestClock.adjust(firstProbeMs)
        yield* waitForEffect(
          "the probe to answer",
          Effect.sync(() => rest.usable(order)),
          (o) => o.length === 3
        )
        expect(rest.usable(order)).toEqual(order)
      })
    )
  )
})
