/**
 * Lost replies, one at a time, through a proxy that lets a script run on Redis and drops its reply
 * with the connection (test/support/replyDropProxy.ts): ioredis reconnects and sends the call
 * again. An enqueue must still write one task and succeed; a worker whose completion reply is lost
 * must report the task completed (not lease-lost) and count it once; a dequeue whose reply is lost
 * must leave no task leased to nobody.
 */
import { Effect, Layer, References } from "effect"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { luaScript } from "../../src/redis/scripts.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startServer } from "../../test/processor/support.js"
import { scriptCallOf, startReplyDropProxy } from "../../test/support/replyDropProxy.js"
import { startRedisServer } from "../../test/support/redis-server.js"
import type { ChaosRow } from "./report.js"
import { pollUntil, rawConnection, track } from "./support.js"

export const lostReplies = async (): Promise<ReadonlyArray<ChaosRow>> => {
  const server = await startRedisServer()
  track(server.stop)
  const raw = rawConnection(server.port)
  const proxy = await startReplyDropProxy({ host: "127.0.0.1", port: server.port })
  const viaProxy = { url: `redis://127.0.0.1:${proxy.port}` }
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
    Effect.runPromise(
      eff.pipe(
        Effect.provide(Broker.layer.pipe(Layer.provideMerge(Redis.layer(viaProxy)))),
        Effect.provideService(References.MinimumLogLevel, "Error")
      ) as Effect.Effect<A, unknown>
    )
  for (const s of [
    "enqueue",
    "complete",
    "completeAndLease",
    "dequeueLease",
    "releaseLeases",
    "retry",
    "archive"
  ] as const)
    await raw.script("LOAD", luaScript(s).source)
  try {
    // 1. enqueue
    await run(enqueue("warmup", "w", { queue: "lr-enq" }))
    await raw.del(queueKeys("lr-enq").pending)
    const dropEnqueue = proxy.dropReplyOf(scriptCallOf("enqueue"))
    const enqueued = await run(enqueue("t", "p", { queue: "lr-enq" }))
    await dropEnqueue
    const enqueueTasks = await raw.llen(queueKeys("lr-enq").pending)

    // 2. a worker's completion
    const outcomes: Array<string> = []
    const worker = await startServer(
      async () => {},
      { queues: { "lr-work": 1 }, concurrency: 1, onSettled: (_, outcome) => void outcomes.push(outcome) },
      viaProxy
    )
    let completeOutcome = "none"
    try {
      await worker.enqueue("warm", "w", { queue: "lr-work" })
      await pollUntil(
        async () => outcomes.length,
        (n) => n === 1,
        10_000
      )
      // The completion goes as `complete`, or as `completeAndLease` when the next fetch rides along.
      const dropComplete = proxy.dropReplyOf(
        (argv) => scriptCallOf("complete")(argv) || scriptCallOf("completeAndLease")(argv)
      )
      await worker.enqueue("t", "p", { queue: "lr-work" })
      await dropComplete
      await pollUntil(
        async () => outcomes.length,
        (n) => n === 2,
        10_000
      )
      completeOutcome = outcomes[1] ?? "none"
    } finally {
      await worker.shutdown()
    }
    const processed = Number(await raw.get(queueKeys("lr-work").processedTotal))

    // 3. a dequeue
    const k = queueKeys("lr-deq")
    for (let i = 0; i < 10; i++) await run(enqueue("t", { i }, { queue: "lr-deq", taskId: `e${i}` }))
    const dropDequeue = proxy.dropReplyOf(scriptCallOf("dequeueLease"))
    const got = await run(dequeueLease({ queues: ["lr-deq"], count: 4 }))
    await dropDequeue
    const leased = await raw.zcard(k.lease)
    const toNobody = leased - got.tasks.length

    return [
      {
        fault: "lost reply to an enqueue (resent by ioredis)",
        figure: `call ${enqueued.state === "pending" ? "succeeded" : "failed"}; ${enqueueTasks} task written`,
        expectation: "succeeds, exactly 1 task",
        pass: enqueued.state === "pending" && enqueueTasks === 1
      },
      {
        fault: "lost reply to a worker's completion",
        figure: `reported "${completeOutcome}"; processed counter ${processed - 1} for the task`,
        expectation: '"completed", counted once (not "lease-lost")',
        pass: completeOutcome === "completed" && processed === 2
      },
      {
        fault: "lost reply to a dequeue (4 of 10 tasks)",
        figure: `worker got ${got.tasks.length}; ${toNobody} left leased to nobody; ${await raw.llen(k.pending)} pending`,
        expectation: "0 leased to nobody (given back to pending at once, not after lease + grace)",
        pass: toNobody === 0 && got.tasks.length === 4
      }
    ]
  } finally {
    await proxy.close()
    raw.disconnect()
    await server.stop()
  }
}
