/**
 * The reconnect policy of Cluster and Sentinel connections: a capped, jittered delay that never
 * gives up (ioredis stops retrying when a strategy returns a non-number), and an outage watcher that
 * reports each outage once however many attempts it takes.
 */
import { EventEmitter } from "node:events"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Redis, reconnectOptions } from "../../src/redis/Redis.js"
import { freePort } from "../support/redis-server.js"
import { reconnectDelayMs, reconnectMaxDelayMs, watchOutages } from "../../src/redis/reconnect.js"

const attempts = [1, 2, 3, 4, 5, 6, 10, 100, 10_000, 1_000_000]

describe("reconnect policy", () => {
  it("starts at 50–100 ms, doubles, and stays within 1–2 s however many attempts", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => reconnectDelayMs(n, () => 0))).toEqual([50, 100, 200, 400, 800, 1000])
    expect([1, 2, 3, 4, 5, 6].map((n) => reconnectDelayMs(n, () => 0.999999))).toEqual([100, 200, 400, 800, 1600, 2000])
    for (const n of attempts) {
      const d = reconnectDelayMs(n)
      expect(d).toBeGreaterThanOrEqual(50)
      expect(d).toBeLessThanOrEqual(reconnectMaxDelayMs)
    }
  })

  it("Cluster and Sentinel connections get strategies that always answer a delay; a single node keeps ioredis's own", () => {
    const nodes = [{ host: "127.0.0.1", port: 7000 }]
    const cluster = reconnectOptions({ cluster: nodes }) as { clusterRetryStrategy: (n: number) => unknown }
    const sentinel = reconnectOptions({ sentinel: { sentinels: nodes, name: "m" } }) as {
      retryStrategy: (n: number) => unknown
      sentinelRetryStrategy: (n: number) => unknown
    }
    for (const strategy of [cluster.clusterRetryStrategy, sentinel.retryStrategy, sentinel.sentinelRetryStrategy])
      for (const n of attempts)
        expect(strategy(n)).toSatisfy((d: unknown) => typeof d === "number" && d > 0 && d <= reconnectMaxDelayMs)
    expect(reconnectOptions({ url: "redis://127.0.0.1:6379" })).toEqual({})
  })

  it("the outage watcher reports one loss and one recovery per outage, not one per attempt, and adds two listeners once", () => {
    const client = new EventEmitter()
    const seen: Array<string> = []
    const watcher = watchOutages(client, { onLost: () => seen.push("lost"), onRestored: () => seen.push("restored") })
    expect(client.listenerCount("reconnecting") + client.listenerCount("ready")).toBe(2)
    client.emit("ready")
    expect(watcher.state()).toEqual({ down: false, outages: 0 })
    for (let outage = 0; outage < 3; outage++) {
      for (let attempt = 0; attempt < 5; attempt++) client.emit("reconnecting")
      expect(watcher.state()).toEqual({ down: true, outages: outage + 1 })
      client.emit("ready")
    }
    expect(seen).toEqual(["lost", "restored", "lost", "restored", "lost", "restored"])
    expect(watcher.state()).toEqual({ down: false, outages: 3 })
    expect(client.listenerCount("reconnecting") + client.listenerCount("ready")).toBe(2)
  })

  it("the first connect to a cluster still fails at once with a RedisConnectionError (no retrying before it ever answered)", async () => {
    const port = await freePort()
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.scoped(
          Effect.asVoid(Layer.build(Redis.layer({ cluster: [{ host: "127.0.0.1", port }], connectTimeoutMs: 10_000 })))
        )
      )
    )
    expect(error._tag).toBe("RedisConnectionError")
    expect(error.message).toContain(`cannot connect to Redis at cluster 127.0.0.1:${port}`)
    // It failed on the refusal itself, not by waiting out connectTimeoutMs while retrying.
    expect(error.message).not.toContain("no answer within")
  })
})
