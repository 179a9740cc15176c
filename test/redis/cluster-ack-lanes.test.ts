/**
 * Completions on a Redis Cluster are batched per queue (src/processor/ackerLanes.ts): while one
 * master hangs (SIGSTOP: its connections stay open and nothing is answered, as in the first
 * seconds of a failover), the tasks of queues on the other masters still complete. With a single
 * batch for every queue they would wait behind the hung master's completions for good.
 * And a task whose completion fails gives its slot back while the write is retried
 * (src/processor/writesAside.ts), so a failed master's tasks holding every slot do not stop the
 * other queues. (Started apart from cluster.test.ts: it stops a node.)
 */
import { Deferred, Effect } from "effect"
import { Cluster, Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Handler } from "../../src/processor/Handler.js"
import { keySlot } from "../../src/redis/keySlot.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startServer } from "../processor/support.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"
import { waitFor } from "../support/waitFor.js"

let cluster: RedisClusterHandle
/** Two queues on two different masters, with their masters' ports. */
let placed: { readonly healthy: string; readonly healthyPort: number; readonly hung: string; readonly hungPort: number }
let paused = false

beforeAll(async () => {
  cluster = await startRedisCluster(60_000, { requireFullCoverage: false })
  const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
  try {
    await c.call("PING")
    const byOwner = new Map<string, string>()
    for (let i = 0; byOwner.size < 2 && i < 1000; i++) {
      const owner = c.slots[keySlot(queueKeys(`lane${i}`).paused)]?.[0]
      if (owner !== undefined && !byOwner.has(owner)) byOwner.set(owner, `lane${i}`)
    }
    const [[healthyOwner, healthy], [hungOwner, hung]] = [...byOwner.entries()] as [[string, string], [string, string]]
    placed = {
      healthy,
      healthyPort: Number(healthyOwner.split(":")[1]),
      hung,
      hungPort: Number(hungOwner.split(":")[1])
    }
  } finally {
    c.disconnect()
  }
}, 90_000)
afterAll(async () => {
  if (paused) cluster.resumeNode(placed.hungPort)
  await cluster?.stop()
})

describe("completions on a Redis Cluster with one master hung", () => {
  it("the queues on the other masters keep completing", async () => {
    const { healthy, healthyPort, hung, hungPort } = placed
    const release = Effect.runSync(Deferred.make<void>())
    const started: Array<string> = []
    const handler: Handler = (task) =>
      Effect.sync(() => void started.push(task.queue)).pipe(Effect.andThen(Deferred.await(release)))
    const healthyCount = 6
    const server = await startServer(
      handler,
      { queues: { [healthy]: 1, [hung]: 1 }, concurrency: healthyCount + 2 },
      { cluster: cluster.nodes }
    )
    try {
      for (let i = 0; i < 2; i++) await server.enqueue("job", { i }, { queue: hung })
      for (let i = 0; i < healthyCount; i++) await server.enqueue("job", { i }, { queue: healthy })
      // Every task is running (every slot busy): nothing more is fetched.
      await waitFor(
        "all tasks to start",
        () => started.length,
        (n) => n === healthyCount + 2,
        { timeoutMs: 20_000 }
      )
      cluster.pauseNode(hungPort)
      paused = true
      // All finish at once: the hung queue's completions go out and get no answer.
      Effect.runSync(Deferred.succeed(release, undefined))
      // Read on the healthy queue's master itself (a cluster client would also wait for the hung one).
      const healthyMaster = new IORedis({ host: "127.0.0.1", port: healthyPort })
      const processed = async () => Number((await healthyMaster.get(queueKeys(healthy).processedTotal)) ?? 0)
      await waitFor(
        `the ${healthyCount} tasks of the healthy queue to complete while the other master hangs`,
        processed,
        (n) => n === healthyCount,
        { timeoutMs: 20_000 }
      )
      expect(await processed()).toBe(healthyCount)
      healthyMaster.disconnect()
    } finally {
      cluster.resumeNode(hungPort)
      paused = false
      await server.shutdown()
    }
  }, 90_000)

  it("tasks whose completion fails give their slots back: the other masters' queues are served meanwhile", async () => {
    // Every slot holds a task of the hung master's queue (tasks fetched together come from one queue
    // and finish together). Their completions fail (command timeout) and are tried again while the
    // lease holds (30 s); held meanwhile, their slots would keep the healthy queue waiting that long
    // (src/processor/writesAside.ts).
    const { healthy, healthyPort, hung, hungPort } = placed
    const release = Effect.runSync(Deferred.make<void>())
    const startedHung: Array<string> = []
    const handler: Handler = (task) =>
      task.queue === hung
        ? Effect.sync(() => void startedHung.push(task.id)).pipe(Effect.andThen(Deferred.await(release)))
        : Effect.void
    const concurrency = 2
    const server = await startServer(
      handler,
      { queues: { [healthy]: 1, [hung]: 1 }, concurrency, leaseMs: 30_000, shutdownTimeoutMs: 1000 },
      { cluster: cluster.nodes, commandTimeoutMs: 500 }
    )
    const healthyMaster = new IORedis({ host: "127.0.0.1", port: healthyPort })
    const hungMaster = new IORedis({ host: "127.0.0.1", port: hungPort })
    let hungBefore = 0
    try {
      for (let i = 0; i < concurrency; i++) await server.enqueue("job", { i }, { queue: hung })
      await waitFor(
        "every slot to hold a task of the hung queue",
        () => startedHung.length,
        (n) => n === concurrency,
        { timeoutMs: 20_000 }
      )
      const processedBefore = Number((await healthyMaster.get(queueKeys(healthy).processedTotal)) ?? 0)
      hungBefore = Number((await hungMaster.get(queueKeys(hung).processedTotal)) ?? 0)
      const healthyCount = 6
      for (let i = 0; i < healthyCount; i++) await server.enqueue("job", { i }, { queue: healthy })
      cluster.pauseNode(hungPort)
      paused = true
      // The hung queue's tasks finish; writing their outcome fails until the master answers again.
      Effect.runSync(Deferred.succeed(release, undefined))
      const processed = async () =>
        Number((await healthyMaster.get(queueKeys(healthy).processedTotal)) ?? 0) - processedBefore
      // Well within the lease: with the slots held, nothing of the healthy queue would run before it ran out.
      await waitFor(
        `the ${healthyCount} tasks of the healthy queue to complete while the hung queue's completions fail`,
        processed,
        (n) => n === healthyCount,
        {
          timeoutMs: 15_000
        }
      )
      expect(await processed()).toBe(healthyCount)
    } finally {
      healthyMaster.disconnect()
      cluster.resumeNode(hungPort)
      paused = false
      await server.shutdown()
    }
    // Once the master answers again, the set-aside completions went through.
    try {
      await waitFor(
        "the hung queue's tasks to be completed",
        async () => Number((await hungMaster.get(queueKeys(hung).processedTotal)) ?? 0) - hungBefore,
        (n) => n === concurrency,
        {
          timeoutMs: 15_000
        }
      )
    } finally {
      hungMaster.disconnect()
    }
  }, 90_000)
})
