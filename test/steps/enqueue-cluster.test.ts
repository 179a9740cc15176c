/**
 * enqueue / enqueueMany on a real 3-master Redis Cluster (started here on loopback ports): every
 * script's keys share the queue's slot, the registration in `asynq:queues` (another slot) goes
 * alongside, and a batch over many queues (many slots) succeeds item by item. Also: the lease of
 * large messages keeps the script-only way there (a Cluster denies SORT GET: src/broker/leaseByIds.ts).
 */
import { Effect, Layer, Result } from "effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { canLeaseByIds } from "../../src/broker/leaseByIds.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"

let nodes: Array<RedisServerHandle> = []
let admin: Array<IORedis> = []

const startCluster = async () => {
  nodes = await Promise.all(
    [0, 1, 2].map(() => startRedisServer(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]))
  )
  admin = nodes.map((n) => new IORedis({ host: "127.0.0.1", port: n.port, maxRetriesPerRequest: 1 }))
  const third = Math.floor(16384 / 3)
  await Promise.all(
    admin.map((c, i) => {
      const from = i * third
      const to = i === 2 ? 16383 : (i + 1) * third - 1
      return c.call("CLUSTER", "ADDSLOTSRANGE", from, to)
    })
  )
  for (const n of nodes.slice(1)) await admin[0]!.call("CLUSTER", "MEET", "127.0.0.1", n.port)
  await waitFor(
    "every node of the test cluster to report cluster_state:ok and 3 known nodes",
    // each node's "cluster_state:… cluster_known_nodes:…"
    () =>
      Promise.all(
        admin.map(
          async (c) =>
            ((await c.call("CLUSTER", "INFO")) as string)
              .match(/cluster_state:\w+|cluster_known_nodes:\d+/g)
              ?.join(" ") ?? ""
        )
      ),
    (states) => states.every((s) => s.includes("cluster_state:ok") && s.includes("cluster_known_nodes:3")),
    { timeoutMs: 20_000 }
  )
}

beforeAll(startCluster, 60_000)
afterAll(async () => {
  admin.forEach((c) => c.disconnect())
  await Promise.all(nodes.map((n) => n.stop()))
})

const brokerLayer = () =>
  Broker.layer.pipe(Layer.provide(Redis.layer({ cluster: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })) })))

describe("enqueue on Redis Cluster", () => {
  it("single enqueues of every kind, and a batch over 12 queues, with registration of every queue", async () => {
    const queues = Array.from({ length: 12 }, (_, i) => `cq${i}`)
    const { single, many } = await Effect.runPromise(
      Effect.gen(function* () {
        const single = [
          yield* enqueue("t", "p", { queue: "cq0", taskId: "one" }),
          yield* enqueue("t", "s", { queue: "cq1", processIn: 60_000, unique: 60_000 }),
          yield* enqueue("t", "g", { queue: "cq2", group: "grp", unique: 60_000 })
        ]
        const many = yield* enqueueMany([
          ...queues.map((queue, i) => ({ type: "bulk", payload: { i }, options: { queue } })),
          { type: "t", payload: "another", options: { queue: "cq0", taskId: "one" } },
          { type: "t", payload: "s", options: { queue: "cq1", processIn: 60_000, unique: 60_000 } }
        ])
        return { single, many }
      }).pipe(Effect.provide(brokerLayer()))
    )
    expect(single.map((i) => i.state)).toEqual(["pending", "scheduled", "aggregating"])
    expect(many.map((r) => (Result.isSuccess(r) ? r.success.state : r.failure._tag))).toEqual([
      ...queues.map(() => "pending"),
      "TaskIdConflict",
      "DuplicateTask"
    ])
    const cluster = new IORedis.Cluster(nodes.map((n) => ({ host: "127.0.0.1", port: n.port })))
    try {
      expect((await cluster.smembers("asynq:queues")).sort()).toEqual([...queues].sort())
      for (const q of queues) expect(await cluster.llen(queueKeys(q).pending)).toBe(q === "cq0" ? 2 : 1)
      // the queues really are spread over the three masters
      const owners = new Set(
        await Promise.all(
          queues.map((q) =>
            cluster
              .call("CLUSTER", "KEYSLOT", queueKeys(q).pending)
              .then((s) => Math.min(2, Math.floor(Number(s) / Math.floor(16384 / 3))))
          )
        )
      )
      expect(owners.size).toBe(3)
    } finally {
      cluster.disconnect()
    }
  })

  it("a Cluster denies SORT's GET option even within the queue's slot, so its lease keeps the script-only way: large messages lease as before", async () => {
    const cluster = new IORedis.Cluster(nodes.map((n) => ({ host: "127.0.0.1", port: n.port })))
    try {
      const k = queueKeys("cbig")
      await cluster.rpush(k.prefix + "leasing", "a")
      await expect(cluster.sort(k.prefix + "leasing", "BY", "nosort", "GET", `${k.taskPrefix}*->msg`)).rejects.toThrow(
        /GET option of SORT denied in Cluster mode/
      )
      await cluster.del(k.prefix + "leasing")
    } finally {
      cluster.disconnect()
    }
    const got = await Effect.runPromise(
      Effect.gen(function* () {
        const broker = yield* Broker
        expect(canLeaseByIds(broker)).toBe(false)
        const big = "y".repeat(100 * 1024)
        for (let i = 0; i < 4; i++) yield* enqueue("big", { i, big }, { queue: "cbig" })
        const first = yield* dequeueLease({ queues: ["cbig"], count: 2 })
        const second = yield* dequeueLease({ queues: ["cbig"], count: 2 })
        return [...first.tasks, ...second.tasks].map((t) => (t.msg.payload?.length ?? 0) > big.length)
      }).pipe(Effect.provide(brokerLayer()))
    )
    expect(got).toEqual([true, true, true, true])
  })
})
