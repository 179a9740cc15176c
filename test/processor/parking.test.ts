/**
 * Parking in a running Server (src/processor/parking.ts), on a private redis-server (the reconnect
 * case kills its pub/sub connections): an idle worker is handed a new task on its push channel and
 * runs it once; one with no free slot gives it back to pending and runs it once a slot is free; a
 * hand-over lost with the push connection goes back to pending when that connection returns, not
 * after the lease; shutdown leaves the queues.
 */
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { leaseScore } from "../../src/broker/releaseLeases.js"
import { unixSeconds } from "../../src/broker/time.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import { parsePush, type Push } from "../../src/processor/parking.js"
import { encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { pushChannel, queueKeys } from "../../src/wire/keys.js"
import { makeMsg } from "../support/arrange.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"
import { startServer, type TestServer } from "./support.js"

let redis: RedisServerHandle
let admin: IORedis
let spy: IORedis
const heard: Array<Push> = []
beforeAll(async () => {
  redis = await startRedisServer()
  admin = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  spy = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  spy.on("messageBuffer", (_channel: Buffer, message: Buffer) => void heard.push(parsePush(message)!))
})
afterAll(async () => {
  admin.disconnect()
  spy.disconnect()
  await redis.stop()
})

const start = (handlers: HandlerInput, options: ServerOptions) => startServer(handlers, options, { url: redis.url, connectTimeoutMs: 2000 })

/** Waits until the server has parked on `queue` (its fetch found the queue empty); returns the token. */
const parkedToken = (s: TestServer, queue: string) =>
  waitFor(`${s.handle.identity.serverId} parked on ${queue}`, () => admin.hget(queueKeys(queue).parked, s.handle.identity.serverId), (t) => t !== null) as Promise<string>

describe("a parked Server", () => {
  it("is handed a new task on its push channel and runs it once", async () => {
    const ran: Array<string> = []
    const s = await start({ "t:hand": (task) => void ran.push(task.id) }, { queues: { hand: 1 }, concurrency: 2 })
    try {
      await spy.subscribe(pushChannel(s.handle.identity.serverId))
      const token = await parkedToken(s, "hand")
      const id = await s.enqueue("t:hand", { n: 1 }, { queue: "hand" })
      await waitFor("the task to run", () => ran, (r) => r.length === 1)
      expect(heard.filter((p) => p.id === id).map((p) => p.token)).toEqual([token])
      await waitFor("the task to be done", () => admin.exists(queueKeys("hand").task(id)), (n) => n === 0)
      expect(await admin.llen(queueKeys("hand").active)).toBe(0)
      expect(ran).toEqual([id])
    } finally {
      await spy.unsubscribe()
      await s.shutdown()
    }
  })

  it("with no free slot, gives a handed task back to the head of pending, and runs it once a slot is free", async () => {
    const ran: Array<string> = []
    let release!: () => void
    const blocked = new Promise<void>((r) => (release = r))
    const s = await start(
      {
        "t:block": async (task) => {
          ran.push(task.id)
          await blocked
        },
        "t:after": (task) => void ran.push(task.id)
      },
      { queues: { full: 1 }, concurrency: 1 }
    )
    try {
      const server = s.handle.identity.serverId
      const k = queueKeys("full")
      await spy.subscribe(pushChannel(server))
      const first = await s.enqueue("t:block", {}, { queue: "full" })
      await waitFor("the blocking task to run", () => ran, (r) => r.includes(first))
      // A token the worker left earlier, still there while its only slot is taken (a race the worker must survive).
      await admin.hset(k.parked, server, leaseScore(unixSeconds(Date.now() + 30_000)))
      const second = await s.enqueue("t:after", {}, { queue: "full" })
      await waitFor("the hand-over", () => heard, (h) => h.some((p) => p.id === second))
      await waitFor("the task given back", () => admin.lrange(k.pending, 0, -1), (p) => p.length === 1 && p[0] === second)
      expect(await admin.hget(k.task(second), "state")).toBe("pending")
      expect(await admin.zscore(k.lease, second)).toBeNull()
      expect(ran).toEqual([first])
      release()
      await waitFor("the second task to run", () => ran, (r) => r.length === 2)
      expect(ran).toEqual([first, second])
    } finally {
      release()
      await spy.unsubscribe()
      await s.shutdown()
    }
  })

  it("gives back a hand-over lost with its push connection once that connection returns (not after the lease)", async () => {
    const ran: Array<string> = []
    const s = await start({ "test:job": (task) => void ran.push(task.id) }, { queues: { lost: 1 }, concurrency: 2 })
    try {
      const server = s.handle.identity.serverId
      const k = queueKeys("lost")
      const token = await parkedToken(s, "lost")
      // What the enqueue script writes for a hand-over whose message never arrives: leased under the token, token taken.
      const msg = makeMsg("lost", "lost-push")
      await admin.hset(k.task(msg.id), "msg", Buffer.from(encodeTaskMessage(msg)), "state", "active")
      await admin.lpush(k.active, msg.id)
      await admin.zadd(k.lease, token, msg.id)
      await admin.hdel(k.parked, server)
      // The message is lost with the connection: kill the pub/sub connections (ioredis reconnects).
      expect(await admin.call("CLIENT", "KILL", "TYPE", "pubsub")).toBeGreaterThan(0)
      await waitFor("the task to run", () => ran, (r) => r.length === 1, { timeoutMs: 10_000 })
      expect(ran).toEqual([msg.id])
      await waitFor("the task to be done", () => admin.exists(k.task(msg.id)), (n) => n === 0)
    } finally {
      await s.shutdown()
    }
  })

  it("leaves its queues at shutdown: a task enqueued afterwards is pending", async () => {
    const s = await start({ "t:x": () => {} }, { queues: { leave: 1 }, concurrency: 1 })
    const server = s.handle.identity.serverId
    await parkedToken(s, "leave")
    await s.shutdown()
    expect(await admin.hexists(queueKeys("leave").parked, server)).toBe(0)
  })
})
