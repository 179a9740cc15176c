/**
 * Parking in a running Server (src/processor/parking.ts, pushReceiver.ts), on a private
 * redis-server (the reconnect cases kill the receiver's connection): an idle worker is handed a new
 * task on its hand-over list and runs it once; one with no free slot gives it back to pending and
 * runs it once a slot is free; a hand-over lost with the receiver's connection goes back to pending
 * when that connection returns, not after the lease; one pushed while that connection is down runs
 * once; a hand-over published by a client of an earlier version runs; shutdown leaves the queues.
 * MONITOR shows the hand-overs as the enqueue script pushes them.
 */
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { leaseScore } from "../../src/broker/releaseLeases.js"
import { unixSeconds } from "../../src/broker/time.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import { encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { parkedPresenceChannel, queueKeys } from "../../src/wire/keys.js"
import { makeMsg } from "../support/arrange.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"
import { startServer, type TestServer } from "./support.js"

let redis: RedisServerHandle
let admin: IORedis
let spy: IORedis
/** The hand-overs the enqueue script pushed (from MONITOR): the list's key and the message's token. */
const heard: Array<{ readonly list: string; readonly token: string; readonly id: string }> = []
beforeAll(async () => {
  redis = await startRedisServer()
  admin = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  spy = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  const monitor = await spy.monitor()
  monitor.on("monitor", (_time: string, args: Array<string>) => {
    if (args[0]?.toLowerCase() !== "lpush" || !args[1]?.includes("}:push:")) return
    // MONITOR shows the message escaped: <token>\n<queue length>\n<queue><id length>\n<id><msg>
    const [token, , , rest] = args[2]!.split("\\n")
    heard.push({ list: args[1], token: token!, id: rest!.slice(0, 13) })
  })
})
afterAll(async () => {
  admin.disconnect()
  spy.disconnect()
  await redis.stop()
})

/** Writes task `id` of `queue` as the enqueue script leaves a hand-over to `server`: leased under `token`, the token taken. */
const writeHandedOver = async (queue: string, id: string, server: string, token: string) => {
  const k = queueKeys(queue)
  const msg = makeMsg(queue, id)
  const bytes = Buffer.from(encodeTaskMessage(msg))
  await admin.hset(k.task(msg.id), "msg", bytes, "state", "active")
  await admin.lpush(k.active, msg.id)
  await admin.zadd(k.lease, token, msg.id)
  await admin.hdel(k.parked, server)
  return { msg, bytes }
}

/** Kills the connections blocked in BLPOP (the servers' hand-over receivers); how many. */
const killReceivers = async () => {
  const list = String(await admin.call("CLIENT", "LIST"))
  const ids = list
    .split("\n")
    .filter((l) => / cmd=blpop /.test(l))
    .map((l) => / id=(\d+) /.exec(` ${l}`)![1]!)
  for (const id of ids) await admin.call("CLIENT", "KILL", "ID", id)
  return ids.length
}

const start = (handlers: HandlerInput, options: ServerOptions) =>
  startServer(handlers, options, { url: redis.url, connectTimeoutMs: 2000 })

/** Waits until the server has parked on `queue` (its fetch found the queue empty); returns the token. */
const parkedToken = (s: TestServer, queue: string) =>
  waitFor(
    `${s.handle.identity.serverId} parked on ${queue}`,
    () => admin.hget(queueKeys(queue).parked, s.handle.identity.serverId),
    (t) => t !== null
  ) as Promise<string>

/** A handler that records each task's id and then waits until `release()` (so the task holds its slot). */
const holdingHandler = () => {
  const ran: Array<string> = []
  let release!: () => void
  const blocked = new Promise<void>((r) => (release = r))
  const handler = async (task: { readonly id: string }) => {
    ran.push(task.id)
    await blocked
  }
  return { ran, handler, release: () => release() }
}

describe("a parked Server", () => {
  it("is handed a new task on its hand-over list and runs it once", async () => {
    const ran: Array<string> = []
    const s = await start({ "t:hand": (task) => void ran.push(task.id) }, { queues: { hand: 1 }, concurrency: 2 })
    try {
      const token = await parkedToken(s, "hand")
      const id = await s.enqueue("t:hand", { n: 1 }, { queue: "hand" })
      await waitFor(
        "the task to run",
        () => ran,
        (r) => r.length === 1
      )
      // MONITOR's copy of the push may arrive after the task ran.
      await waitFor(
        "MONITOR to show the hand-over",
        () => heard.filter((p) => p.id === id),
        (h) => h.length > 0
      )
      expect(heard.filter((p) => p.id === id)).toEqual([
        { list: queueKeys("hand").pushList(s.handle.identity.serverId), token, id }
      ])
      await waitFor(
        "the task to be done",
        () => admin.exists(queueKeys("hand").task(id)),
        (n) => n === 0
      )
      expect(await admin.llen(queueKeys("hand").active)).toBe(0)
      expect(ran).toEqual([id])
    } finally {
      await s.shutdown()
    }
  })

  it("with several slots free, is handed that many tasks under one park (no dequeue between them), then parks again", async () => {
    const { ran, handler, release } = holdingHandler()
    const s = await start({ "t:room": handler }, { queues: { room: 1 }, concurrency: 3 })
    try {
      const server = s.handle.identity.serverId
      const k = queueKeys("room")
      const token = await parkedToken(s, "room")
      expect(await admin.hget(k.parkRoom, server)).toBe("3")
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        ids.push(await s.enqueue("t:room", { i }, { queue: "room" }))
        await waitFor(
          `task ${i} to run`,
          () => ran,
          (r) => r.length === i + 1
        )
      }
      await waitFor(
        "MONITOR to show the hand-overs",
        () => heard.filter((p) => ids.includes(p.id)),
        (h) => h.length === 3
      )
      expect(heard.filter((p) => ids.includes(p.id)).map((p) => p.token)).toEqual([token, token, token])
      // Every slot taken: no park until one is free.
      expect(await admin.hexists(k.parked, server)).toBe(0)
      const fourth = await s.enqueue("t:room", { i: 3 }, { queue: "room" })
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([fourth])
      release()
      await waitFor(
        "all four run",
        () => ran,
        (r) => r.length === 4
      )
      // Parked again with a new token (the fetch that took the fourth task left room for two; the
      // next look, at the poll interval, parks with all three slots).
      await waitFor(
        "parked again",
        () => admin.hget(k.parked, server),
        (t) => t !== null && t !== token
      )
      await waitFor(
        "room for every slot",
        () => admin.hget(k.parkRoom, server),
        (r) => r === "3"
      )
    } finally {
      await s.shutdown()
    }
  })

  it("with no free slot, gives a handed task back to the head of pending, and runs it once a slot is free", async () => {
    const { ran, handler, release } = holdingHandler()
    const s = await start(
      {
        "t:block": handler,
        "t:after": (task) => void ran.push(task.id)
      },
      { queues: { full: 1 }, concurrency: 1 }
    )
    try {
      const server = s.handle.identity.serverId
      const k = queueKeys("full")
      const first = await s.enqueue("t:block", {}, { queue: "full" })
      await waitFor(
        "the blocking task to run",
        () => ran,
        (r) => r.includes(first)
      )
      // A token the worker left earlier, still there while its only slot is taken (a race the worker must survive).
      await admin.hset(k.parked, server, leaseScore(unixSeconds(Date.now() + 30_000)))
      const second = await s.enqueue("t:after", {}, { queue: "full" })
      await waitFor(
        "the hand-over",
        () => heard,
        (h) => h.some((p) => p.id === second)
      )
      await waitFor(
        "the task given back",
        () => admin.lrange(k.pending, 0, -1),
        (p) => p.length === 1 && p[0] === second
      )
      expect(await admin.hget(k.task(second), "state")).toBe("pending")
      expect(await admin.zscore(k.lease, second)).toBeNull()
      expect(ran).toEqual([first])
      release()
      await waitFor(
        "the second task to run",
        () => ran,
        (r) => r.length === 2
      )
      expect(ran).toEqual([first, second])
    } finally {
      release()
      await s.shutdown()
    }
  })

  it("gives back a hand-over lost with the receiver's connection once that connection returns (not after the lease)", async () => {
    const ran: Array<string> = []
    const s = await start({ "test:job": (task) => void ran.push(task.id) }, { queues: { lost: 1 }, concurrency: 2 })
    try {
      const server = s.handle.identity.serverId
      const k = queueKeys("lost")
      const token = await parkedToken(s, "lost")
      // What the enqueue script writes for a hand-over whose reply never arrives (popped, then lost).
      const { msg } = await writeHandedOver("lost", "lost-push", server, token)
      // The reply is lost with the connection: kill the receiver's connection (ioredis reconnects).
      expect(await killReceivers()).toBe(1)
      await waitFor(
        "the task to run",
        () => ran,
        (r) => r.length === 1,
        { timeoutMs: 10_000 }
      )
      expect(ran).toEqual([msg.id])
      await waitFor(
        "the task to be done",
        () => admin.exists(k.task(msg.id)),
        (n) => n === 0
      )
    } finally {
      await s.shutdown()
    }
  })

  it("runs once a task handed over while the receiver's connection is down", async () => {
    const ran: Array<string> = []
    const s = await start({ "t:down": (task) => void ran.push(task.id) }, { queues: { down: 1 }, concurrency: 2 })
    try {
      const k = queueKeys("down")
      await parkedToken(s, "down")
      expect(await killReceivers()).toBe(1)
      // The presence channel is on the pub/sub connection, still up: the enqueue hands the task over.
      const id = await s.enqueue("t:down", {}, { queue: "down" })
      await waitFor(
        "the task to run",
        () => ran,
        (r) => r.length >= 1,
        { timeoutMs: 10_000 }
      )
      await waitFor(
        "the task to be done",
        () => admin.exists(k.task(id)),
        (n) => n === 0
      )
      // Popped and run, or given back at the reconnect and fetched: either way once.
      await waitFor(
        "the worker to park again",
        () => admin.hexists(k.parked, s.handle.identity.serverId),
        (n) => n === 1
      )
      expect(ran).toEqual([id])
      // Handed over at most once (not at all when the reconnect's give-back took the token first).
      expect(heard.filter((p) => p.id === id).length).toBeLessThanOrEqual(1)
      expect(await admin.llen(k.active)).toBe(0)
      expect(await admin.llen(k.pending)).toBe(0)
    } finally {
      await s.shutdown()
    }
  })

  it("deletes a damaged hand-over list (not a list) that fails its BLPOP, so the other queues' hand-overs keep running", async () => {
    const ran: Array<string> = []
    const s = await start(
      { "t:ok": (task) => void ran.push(task.id) },
      { queues: { damaged: 1, healthy: 1 }, concurrency: 2 }
    )
    try {
      const server = s.handle.identity.serverId
      await parkedToken(s, "healthy")
      await admin.set(queueKeys("damaged").pushList(server), "not a list")
      // The blocked BLPOP is served by the healthy list; the next one meets the damaged key.
      const first = await s.enqueue("t:ok", {}, { queue: "healthy" })
      await waitFor(
        "the first hand-over to run",
        () => ran,
        (r) => r.includes(first)
      )
      await waitFor(
        "the damaged list deleted",
        () => admin.exists(queueKeys("damaged").pushList(server)),
        (n) => n === 0
      )
      await parkedToken(s, "healthy")
      const second = await s.enqueue("t:ok", {}, { queue: "healthy" })
      await waitFor(
        "the second hand-over to run",
        () => ran,
        (r) => r.includes(second)
      )
      await waitFor(
        "MONITOR to show both hand-overs",
        () => heard.filter((p) => p.id === first || p.id === second),
        (h) => h.length >= 2
      )
      expect(heard.filter((p) => p.id === first || p.id === second)).toHaveLength(2)
    } finally {
      await s.shutdown()
    }
  })

  it("is handed nothing by clients of earlier versions, which cannot tell a stalled worker from a live one: nobody listens on their channels", async () => {
    const s = await start({ "test:job": () => {} }, { queues: { legacy: 1 }, concurrency: 2 })
    try {
      const server = s.handle.identity.serverId
      await parkedToken(s, "legacy")
      // Their enqueue script hands a task over only when one of these has a subscriber (else the task is pending).
      expect(
        await admin.call("PUBSUB", "NUMSUB", `effect-asynq:park:${server}`, `effect-asynq:push:${server}`)
      ).toEqual([`effect-asynq:park:${server}`, 0, `effect-asynq:push:${server}`, 0])
      expect(await admin.call("PUBSUB", "NUMSUB", parkedPresenceChannel(server))).toEqual([
        parkedPresenceChannel(server),
        1
      ])
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
    expect(await admin.exists(queueKeys("leave").pushList(server))).toBe(0)
    // The receiver's connection, blocked in BLPOP, is closed with the server.
    expect(String(await admin.call("CLIENT", "LIST"))).not.toMatch(/ cmd=blpop /)
  })
})
