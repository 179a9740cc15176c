import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Redis as IORedis } from "ioredis"
import { Effect, Layer } from "effect"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { clusterKeySlot, clusterNodes } from "../../src/inspector/cluster.js"
import { redisInfo } from "../../src/inspector/redisInfo.js"
import { keySlot } from "../../src/redis/keySlot.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { makeHarness } from "./harness.js"
import { waitFor } from "../support/waitFor.js"

const h = makeHarness()
let node: RedisServerHandle
let raw: IORedis

beforeAll(async () => {
  // A one-node Redis Cluster owning all 16384 slots.
  node = await startRedisServer(["--cluster-enabled", "yes", "--cluster-announce-ip", "127.0.0.1"])
  raw = new IORedis(node.url)
  await raw.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
  await waitFor(
    "the one-node cluster to report cluster_state:ok",
    () => raw.call("CLUSTER", "INFO") as Promise<string>,
    (info) => info.includes("cluster_state:ok"),
    { timeoutMs: 20_000 }
  )
}, 30_000)
afterAll(async () => {
  raw.disconnect()
  await node.stop()
  await h.dispose()
})

const onCluster = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.runPromise(
    eff.pipe(
      Effect.provide(
        Broker.layer.pipe(Layer.provide(Redis.layer({ cluster: [{ host: "127.0.0.1", port: node.port }] })))
      )
    )
  )

describe("cluster", () => {
  it("computes the same hash slot as Redis for queue keys and hash tags", async () => {
    for (const key of [
      "asynq:{default}:pending",
      "asynq:{critical}:t:x",
      "asynq:{キュー}:pending",
      "foo",
      "{}bar",
      "a{b}c{d}"
    ]) {
      expect(keySlot(key)).toBe(Number(await raw.call("CLUSTER", "KEYSLOT", key)))
    }
    expect(await h.run(clusterKeySlot("default"))).toBe(
      Number(await raw.call("CLUSTER", "KEYSLOT", "asynq:{default}:pending"))
    )
  })

  it("lists the node serving a queue's slot", async () => {
    const myId = String(await raw.call("CLUSTER", "MYID"))
    expect(await onCluster(clusterNodes("default"))).toEqual([{ id: myId, addr: `127.0.0.1:${node.port}` }])
  })

  it("redisInfo: the INFO of each master, with its address", async () => {
    const nodes = await onCluster(redisInfo())
    expect(nodes.map((n) => n.address)).toEqual([`127.0.0.1:${node.port}`])
    expect(nodes[0]!.info["redis_mode"]).toBe("cluster")
    expect(nodes[0]!.info["tcp_port"]).toBe(String(node.port))
  })

  it("fails with NotACluster on a single Redis", async () => {
    const e = await h.fail(clusterNodes("default"))
    expect(e).toMatchObject({ _tag: "NotACluster" })
    expect(e.message).toContain("is not a Redis Cluster")
  })
})
