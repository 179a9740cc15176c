/**
 * A Redis Cluster with every node down: a call made during the outage fails within the command
 * timeout (a RedisError whose cause is a CommandTimeout naming the cluster), instead of waiting in
 * ioredis's Cluster queue for as long as the outage lasts. Both ways a whole cluster goes away:
 * every node frozen (SIGSTOP: connections open, nothing answered) and every node killed (SIGKILL:
 * the client reconnects and holds calls meanwhile). Through a worker's Broker and createClient.
 * A frozen cluster's timed-out enqueue makes no duplicate once it thaws (the lost-reply rule).
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as Context from "effect/Context"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { createClient } from "../../src/client.js"
import { isCommandTimeout, type RedisError } from "../../src/redis/errors.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { Redis } from "../../src/redis/Redis.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"
import { waitFor } from "../support/waitFor.js"

let cluster: RedisClusterHandle
beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)
afterAll(async () => {
  for (const n of cluster?.nodes ?? []) cluster.resumeNode(n.port)
  await cluster?.stop()
})

/** How long a call may take before the test calls it unbounded: generous (an enqueue's bound is 3 × the command timeout, 15 s by default). */
const eventually = 40_000
/** A shorter command timeout than the default, for the test that does not check the default. */
const shortTimeoutMs = 1000

/** `p`'s failure, or a test failure when it has not settled within `eventually`. */
const failsWithin = <A>(what: string, p: Promise<A>): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} still pending after ${eventually} ms`)), eventually)
    p.then(
      (v) => (clearTimeout(timer), reject(new Error(`${what} succeeded during the outage: ${String(v)}`))),
      (e: unknown) => (clearTimeout(timer), resolve(e))
    )
  })

const openBroker = async (options: RedisOptions) => {
  const scope = await Effect.runPromise(Scope.make())
  const layer = Broker.layer.pipe(Layer.provideMerge(Redis.layer(options)))
  const context = (await Effect.runPromise(Layer.buildWithScope(layer, scope))) as Context.Context<Broker>
  return { broker: Context.get(context, Broker), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** The calls a worker and a client make, all during the outage; each must fail with a CommandTimeout naming the cluster. */
const callsDuringOutage = async (
  broker: Broker["Service"],
  client: ReturnType<typeof createClient>,
  taskId: string
) => {
  const [script, batch, command, enqueue] = await Promise.all([
    failsWithin("a script call", Effect.runPromise(broker.redis.script("registerQueue", ["asynq:queues"], ["outage"]))),
    Effect.runPromise(
      broker.redis.scriptBatch([
        { script: "registerQueue", keys: ["asynq:queues"], args: ["a"] },
        { script: "registerQueue", keys: [queueKeys("other").pending], args: ["b"] }
      ])
    ),
    failsWithin(
      "a plain command",
      Effect.runPromise(broker.redis.command("llen", ["LLEN", queueKeys("default").pending]))
    ),
    failsWithin("createClient's enqueue", client.enqueue("during:outage", { n: 1 }, { taskId }))
  ])
  for (const e of [script, command, enqueue]) {
    expect(e).toMatchObject({ _tag: "RedisError", message: expect.stringContaining(`Command timed out`) })
    expect((e as RedisError).message).toContain(`cluster 127.0.0.1:${cluster.nodes[0]!.port}`)
    expect(isCommandTimeout(e)).toBe(true)
  }
  for (const r of batch) {
    expect(r.ok).toBe(false)
    if (!r.ok) expect(isCommandTimeout(r.error)).toBe(true)
  }
}

describe("Redis Cluster with every node down", () => {
  it("every node frozen (SIGSTOP), default options: calls fail within the default command timeout; once thawed the enqueue has made one task", async () => {
    const { broker, close } = await openBroker({ cluster: cluster.nodes })
    const client = createClient({ cluster: cluster.nodes })
    try {
      await client.enqueue("warm", 0)
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      for (const n of cluster.nodes) cluster.pauseNode(n.port)
      await callsDuringOutage(broker, client, "frozen-1")
      for (const n of cluster.nodes) cluster.resumeNode(n.port)
      const raw = new IORedis.Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
      try {
        await waitFor(
          "the frozen enqueue to land",
          () => raw.hget(queueKeys("default").task("frozen-1"), "state"),
          (s) => s === "pending"
        )
        expect((await raw.lrange(queueKeys("default").pending, 0, -1)).filter((id) => id === "frozen-1")).toHaveLength(
          1
        )
      } finally {
        raw.disconnect()
      }
    } finally {
      for (const n of cluster.nodes) cluster.resumeNode(n.port)
      await client.close()
      await close()
    }
  }, 120_000)

  it("every node killed (SIGKILL): calls fail within the command timeout instead of waiting for the cluster to come back; it works again after", async () => {
    const { broker, close } = await openBroker({ cluster: cluster.nodes, commandTimeoutMs: shortTimeoutMs })
    const client = createClient({ cluster: cluster.nodes, commandTimeoutMs: shortTimeoutMs })
    try {
      await client.enqueue("warm", 0)
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      await cluster.killAll()
      await callsDuringOutage(broker, client, "killed-1")
      await cluster.restartAll()
      await waitFor(
        "the cluster client to enqueue again",
        () =>
          client.enqueue("after:outage", 1).then(
            () => true,
            () => false
          ),
        Boolean,
        { timeoutMs: 30_000 }
      )
      await waitFor(
        "the worker's Broker to answer again",
        () => Effect.runPromise(broker.redis.command("ping", ["PING"])).catch(() => "no"),
        (r) => r === "PONG",
        { timeoutMs: 30_000 }
      )
    } finally {
      await client.close()
      await close()
    }
  }, 120_000)
})
