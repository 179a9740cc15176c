/**
 * The Redis service's batch runner on a real 3-master Redis Cluster whose masters are not all
 * reachable: a batch spanning three slots on three masters goes out as one pipeline per slot, and
 * when one master is down only the calls of its slot fail (each with its own RedisError); the
 * others get their replies, in call order. (Started apart from cluster.test.ts: it kills a node.)
 */
import "../support/allLua.js"
import { Effect } from "effect"
import { Cluster, Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Redis } from "../../src/redis/Redis.js"
import { keySlot } from "../../src/redis/keySlot.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"

let cluster: RedisClusterHandle
/** Three queues whose keys sit on three different masters, with each master's address. */
let placed: ReadonlyArray<{ readonly queue: string; readonly host: string; readonly port: number }>

beforeAll(async () => {
  cluster = await startRedisCluster()
  const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
  try {
    await c.call("PING")
    const byOwner = new Map<string, { queue: string; host: string; port: number }>()
    for (let i = 0; byOwner.size < 3 && i < 1000; i++) {
      const owner = c.slots[keySlot(queueKeys(`b${i}`).paused)]?.[0]
      if (owner !== undefined && !byOwner.has(owner)) {
        const [host, port] = owner.split(":")
        byOwner.set(owner, { queue: `b${i}`, host: host!, port: Number(port) })
      }
    }
    placed = [...byOwner.values()]
  } finally {
    c.disconnect()
  }
}, 60_000)
afterAll(() => cluster?.stop())

describe("a call with a SORT read on a Redis Cluster (which denies SORT's GET option)", () => {
  it("fails alone, saying why; the batch's other calls (on several masters) get their replies in their places", async () => {
    expect(placed).toHaveLength(3)
    const [a, b] = placed as [(typeof placed)[0], (typeof placed)[0]]
    const replies = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const r = yield* Redis
          return yield* r.scriptBatch([
            { script: "unpauseQueue", keys: [queueKeys(a.queue).paused], args: [] },
            {
              script: "unpauseQueue",
              keys: [queueKeys(b.queue).paused],
              args: [],
              sorted: { list: queueKeys(b.queue).prefix + "leasing", get: queueKeys(b.queue).taskPrefix + "*->msg" }
            },
            { script: "pauseQueue", keys: [queueKeys(b.queue).paused], args: [1] },
            { script: "unpauseQueue", keys: [queueKeys(b.queue).paused], args: [] }
          ])
        }).pipe(Effect.provide(Redis.layer({ cluster: cluster.nodes })))
      )
    )
    expect(replies.map((x) => (x.ok ? x.value : x.error._tag))).toEqual([0, "RedisError", 1, 1])
    expect(replies[1]!.ok ? "" : replies[1]!.error.message).toContain("a Cluster denies SORT's GET option")
  }, 60_000)
})

describe("Redis service batches on a Redis Cluster with a master down", () => {
  it("fails only the calls of the unreachable master's slot; the other slots' calls get their replies, in order", async () => {
    expect(placed).toHaveLength(3)
    const [a, b, down] = placed as [(typeof placed)[0], (typeof placed)[0], (typeof placed)[0]]
    const call = (q: string, script: "pauseQueue" | "unpauseQueue") => ({
      script,
      keys: [queueKeys(q).paused],
      args: script === "pauseQueue" ? [1] : []
    })
    const calls = [
      call(a.queue, "pauseQueue"),
      call(down.queue, "pauseQueue"),
      call(b.queue, "pauseQueue"),
      call(a.queue, "pauseQueue"),
      call(down.queue, "unpauseQueue"),
      call(b.queue, "unpauseQueue")
    ]
    const replies = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const r = yield* Redis
          // Warm up: every master answers (and the scripts get loaded everywhere).
          const before = yield* r.scriptBatch(calls.map((x) => ({ ...x, script: "unpauseQueue" as const, args: [] })))
          expect(before.every((x) => x.ok)).toBe(true)
          // Stop the third queue's master for good.
          const node = new IORedis({ host: down.host, port: down.port, lazyConnect: true })
          yield* Effect.promise(async () => {
            const info = String(await node.call("INFO", "server"))
            const pid = Number(/process_id:(\d+)/.exec(info)![1])
            node.disconnect()
            process.kill(pid, "SIGKILL")
          })
          return yield* r.scriptBatch(calls)
        }).pipe(Effect.provide(Redis.layer({ cluster: cluster.nodes, maxRetriesPerRequest: 1 })))
      )
    )
    const shown = replies.map((x) => (x.ok ? x.value : x.error._tag))
    expect(shown).toEqual([1, "RedisError", 1, 0, "RedisError", 1])
    // Each failed call has its own error, naming its script.
    expect(replies[1]!.ok ? undefined : replies[1]!.error.op).toBe("script pauseQueue")
    expect(replies[4]!.ok ? undefined : replies[4]!.error.op).toBe("script unpauseQueue")
  }, 60_000)
})
