/**
 * The benchmark's round-trip floor (bench/libs/roundTripFloor.ts) is a reference figure in every
 * run, so it must do what the README says it does: one EVALSHA per enqueue writing a record and the
 * list entry, a worker that hands each payload to the handler, and replies read whole however
 * the socket splits them. It counts server-wide command stats, so it runs on a redis-server of its
 * own (other test files share the run's server).
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { make, openConnection } from "../../bench/libs/roundTripFloor.js"
import type { Payload } from "../../bench/libs/types.js"
import { Redis } from "ioredis"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"

let server: RedisServerHandle
let c: IORedis
const testRedisUrl = (): string => server.url
beforeAll(async () => {
  server = await startRedisServer()
  c = new Redis(server.url, { maxRetriesPerRequest: 1 })
  c.on("error", () => {})
})
afterAll(async () => {
  c.disconnect()
  await server.stop()
})

describe("bench round-trip floor", () => {
  it("enqueues with one script call per task (a record and a list entry) and its worker hands every payload over in order", async () => {
    const floor = await make({ redisUrl: testRedisUrl(), queue: "floorq" })
    await c.config("RESETSTAT")
    await floor.enqueueOne({ n: 1, t: 0 })
    await floor.enqueueOne({ n: 2, t: 0 })
    expect(await c.hget("floor:{floorq}:t:0", "data")).toBe(JSON.stringify({ n: 1, t: 0 }))
    expect(await c.lrange("floor:{floorq}:wait", 0, -1)).toEqual([
      `1\n${JSON.stringify({ n: 2, t: 0 })}`,
      `0\n${JSON.stringify({ n: 1, t: 0 })}`
    ])
    const stats = (await c.info("commandstats")) as string
    expect(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1]).toBe("2")
    // 50 callers at once: pipelined on the one socket, every reply goes to its own caller.
    await Promise.all(Array.from({ length: 50 }, (_, i) => floor.enqueueOne({ n: 3 + i, t: 0 })))
    expect(await c.llen("floor:{floorq}:wait")).toBe(52)
    const got: Array<Payload> = []
    const worker = await floor.startWorker(10, (p) => got.push(p))
    await waitFor(
      "the 52 payloads",
      () => got.length,
      (n) => n === 52
    )
    await worker.stop()
    await floor.close()
    expect(got.map((p) => p.n)).toEqual(Array.from({ length: 52 }, (_, i) => i + 1))
    await expect(floor.enqueueBulk([{ n: 0, t: 0 }])).rejects.toThrow(/no bulk enqueue/)
  })

  it("reads a reply whole when it arrives in pieces, and passes an error reply to its caller", async () => {
    const conn = await openConnection(testRedisUrl())
    const big = "x".repeat(200_000)
    expect(await conn.call(["SET", "floor:big", big])).toBe("OK")
    // A 200 kB bulk string comes in many socket reads.
    expect(await conn.call(["GET", "floor:big"])).toBe(big)
    expect(await conn.call(["RPUSH", "floor:l", "a", "b"])).toBe(2)
    expect(await conn.call(["LRANGE", "floor:l", "0", "-1"])).toEqual(["a", "b"])
    expect(await conn.call(["GET", "floor:none"])).toBeNull()
    await expect(conn.call(["LPUSH", "floor:big", "z"])).rejects.toThrow(/WRONGTYPE/)
    conn.close()
  })
})
