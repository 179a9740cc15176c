/**
 * A Redis Cluster whose nodes ALL go away (SIGKILL) for longer than a few reconnect attempts and
 * then come back on the same ports with the same nodes.conf: the Redis service, a Promise client
 * (createClient) and a running Server reconnect on their own and work again; each outage is
 * logged once when it starts and once when it is over; repeated outages add no listeners.
 */
import { Effect, Exit, Layer, Logger, Scope } from "effect"
import * as Context from "effect/Context"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient } from "../../src/client.js"
import { Redis, type RedisClient, type RedisShape } from "../../src/redis/Redis.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "../processor/support.js"

let cluster: RedisClusterHandle
beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)
afterAll(() => cluster?.stop())

/** Longer than the old give-up time (three retries 100/200/300 ms apart, each also failing at once). */
const outageMs = 3000

/**
 * Kills every node, waits `outageMs` of real time, starts them again. `redis` is used meanwhile (a
 * cluster client notices the outage when a command meets a dead node), but not waited on: while it
 * reconnects, a command waits in its offline queue.
 */
const outage = async (redis: RedisShape) => {
  await cluster.killAll()
  await waitFor("the Redis service to see the outage", () => {
    redis.client.ping().catch(() => {})
    return redis.connectionState().down
  })
  await new Promise((r) => setTimeout(r, outageMs))
  await cluster.restartAll()
}

/** How many listeners a client has, over all events. */
const listeners = (c: RedisClient) => c.eventNames().reduce((n, e) => n + c.listenerCount(e), 0)

describe("Redis Cluster whose nodes all restart", () => {
  it("the Redis service, a cluster createClient and a running Server work again; one log line per outage start and end; no listener added", async () => {
    const warnings: Array<string> = []
    const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`)
    process.on("warning", onWarning)

    const logs: Array<string> = []
    const capture = Logger.make(
      ({ message }) => void logs.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    )
    const scope = await Effect.runPromise(Scope.make())
    const context = (await Effect.runPromise(
      Layer.buildWithScope(Redis.layer({ cluster: cluster.nodes }), scope).pipe(Effect.provide(Logger.layer([capture])))
    )) as Context.Context<Redis>
    const redis = Context.get(context, Redis)
    const client = createClient({ cluster: cluster.nodes })
    const processed: Array<string> = []
    const srv = await startServer(
      { "restart:ping": async (task) => void processed.push(task.id) },
      { concurrency: 2, shutdownTimeoutMs: 1000, queues: { restart: 1 } },
      { cluster: cluster.nodes }
    )
    try {
      expect(await Effect.runPromise(redis.use("ping", (c) => c.ping()))).toBe("PONG")
      const first = await client.enqueue("restart:ping", null, { queue: "restart" })
      await waitFor("the first task to be processed", () => processed.includes(first.id))
      const listenersBefore = listeners(redis.client)

      for (let round = 1; round <= 2; round++) {
        await outage(redis)
        // Every read retries: the cluster may still be settling (CLUSTERDOWN) right after the restart.
        await waitFor(
          `round ${round}: the Redis service to answer again`,
          () => Effect.runPromise(redis.use("ping", (c) => c.ping())),
          (v) => v === "PONG",
          { timeoutMs: 20_000 }
        )
        const info = await waitFor(
          `round ${round}: createClient to enqueue again`,
          () => client.enqueue("restart:ping", { round }, { queue: "restart" }),
          () => true,
          { timeoutMs: 20_000 }
        )
        await waitFor(
          `round ${round}: the running Server to process the task enqueued after the restart`,
          () => processed.includes(info.id),
          Boolean,
          { timeoutMs: 20_000 }
        )
        expect(logs.filter((l) => l.includes("connection lost"))).toHaveLength(round)
        expect(logs.filter((l) => l.includes("connection restored"))).toHaveLength(round)
        expect(redis.connectionState()).toEqual({ down: false, outages: round })
      }
      expect(listeners(redis.client)).toBe(listenersBefore)
      expect(warnings.filter((w) => w.includes("MaxListenersExceeded"))).toEqual([])
    } finally {
      process.off("warning", onWarning)
      await srv.shutdown()
      await client.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)
})
