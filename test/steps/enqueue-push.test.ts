/**
 * Parking, in the scripts (lua/dequeueLease.lua, lua/includes/pushToParked.lua): a dequeue that
 * comes back short leaves a park token for its worker; the next task enqueued while the queue has
 * no pending task is written as leased to that worker (as a dequeue leaves it) and pushed on its
 * hand-over list. Nobody on the worker's presence channel, a paused queue or pending tasks ahead:
 * the task is written as pending, as without parking.
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { confirmHandoversScript, reclaimHandoversScript } from "../../src/broker/handovers.js"
import { runScript } from "../../src/broker/script.js"
import { leaseScore, leaseScoreExpirySec } from "../../src/broker/releaseLeases.js"
import { unixSeconds } from "../../src/broker/time.js"
import {
  type HandoverIntake,
  livenessMarkTtlMs,
  makeParking,
  maxPushWaitMs,
  parsePush,
  type Push
} from "../../src/processor/parking.js"
import { leaseFrom } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { decodeTaskMessage, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { parkedPresenceChannel, queueKeys, wakeChannel } from "../../src/wire/keys.js"
import { makeMsg, putPending, testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

let admin: IORedis
let sub: IORedis
const wakes: Array<string> = []
const server = `push-test-${process.pid}`
beforeAll(async () => {
  await flushTestDb()
  admin = rawClient()
  sub = rawClient()
  sub.on("message", (channel: string, message: string) => {
    if (channel === wakeChannel && message.startsWith("push-")) wakes.push(message)
  })
  await sub.subscribe(wakeChannel)
})
/** The hand-overs waiting on `server`'s list of `queue`, oldest first, taken off the list (what the worker's receiver pops). */
const takeRaw = async (queue: string): Promise<Array<Buffer>> => {
  const out: Array<Buffer> = []
  for (;;) {
    const m = await admin.rpopBuffer(queueKeys(queue).pushList(server))
    if (m === null) return out
    out.push(m)
  }
}
const takePushes = async (queue: string): Promise<Array<Push>> => (await takeRaw(queue)).map((m) => parsePush(m)!)
/** Runs `f` while `server` is present (its presence channel has a subscriber, as a live worker's has). */
const present = async <A>(f: () => Promise<A>): Promise<A> => {
  await sub.subscribe(parkedPresenceChannel(server))
  try {
    return await f()
  } finally {
    await sub.unsubscribe(parkedPresenceChannel(server))
  }
}
afterAll(() => {
  admin.disconnect()
  sub.disconnect()
})

const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.runPromise(eff.pipe(Effect.provide(testBrokerLayer())) as Effect.Effect<A>)

/** Sets the liveness mark of worker `as` in `queue`, for a minute (a live worker's tick renews it every second). */
const markAlive = (queue: string, as = server) => admin.set(queueKeys(queue).alive(as), "1", "PX", 60_000)

/**
 * Parks `server` on `queue` with a fresh token (a dequeue of `slots` tasks, one by default, from the
 * empty queue), its liveness mark set; returns the token.
 */
const park = async (queue: string, as = server, slots = 1) => {
  const tokens: Array<string> = []
  const got = await run(
    leaseFrom([queue], slots, 30_000, { parking: { server: as, parked: (_q, t) => tokens.push(t) } })
  )
  expect(got.tasks).toEqual([])
  expect(tokens).toHaveLength(1)
  await markAlive(queue, as)
  return tokens[0]!
}

describe("dequeue parks its worker", () => {
  it("leaves a token when it comes back short, removes it when it is full, none on a paused queue", async () => {
    const k = queueKeys("push-park")
    const token = await park("push-park")
    expect(await admin.hget(k.parked, server)).toBe(token)
    // A full dequeue (one task for one slot) takes the token back.
    await putPending(admin, makeMsg("push-park", "p1"), Date.now())
    const tokens: Array<string> = []
    const got = await run(
      leaseFrom(["push-park"], 1, 30_000, { parking: { server, parked: (_q, t) => tokens.push(t) } })
    )
    expect(got.tasks).toHaveLength(1)
    // The worker hears of the call's token before it goes out; the full call left no park under it.
    expect(tokens).toHaveLength(1)
    expect(await admin.hexists(k.parked, server)).toBe(0)

    await admin.set(k.paused, Date.now())
    await run(leaseFrom(["push-park"], 1, 30_000, { parking: { server, parked: () => {} } }))
    expect(await admin.hexists(k.parked, server)).toBe(0)
  })
})

describe("enqueue hands a task to a parked worker", () => {
  it("writes it as a dequeue would lease it under the token, and pushes it on the worker's list", () =>
    present(async () => {
      const k = queueKeys("push-hand")
      const token = await park("push-hand")
      const info = await run(enqueue("t:hand", { n: 1 }, { queue: "push-hand", unique: 60_000 }))
      const got = await takePushes("push-hand")
      expect(got).toHaveLength(1)
      const p = got[0]!
      expect({ queue: p.queue, token: p.token, id: p.id }).toEqual({ queue: "push-hand", token, id: info.id })
      const msg = decodeTaskMessage(p.bytes)
      expect({ id: msg.id, type: msg.type, queue: msg.queue }).toEqual({
        id: info.id,
        type: "t:hand",
        queue: "push-hand"
      })
      // asynq's layout of a leased task: state active, in active and lease (scored by the token), no pending_since.
      const hash = await admin.hgetall(k.task(info.id))
      expect(hash.state).toBe("active")
      expect(hash.pending_since).toBeUndefined()
      expect(hash.unique_key).toBe(msg.uniqueKey)
      expect(await admin.lrange(k.active, 0, -1)).toEqual([info.id])
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([])
      expect(Number(await admin.zscore(k.lease, info.id))).toBe(Number(token))
      expect(leaseScoreExpirySec(token) * 1000).toBeGreaterThan(Date.now() + 25_000)
      // Its park had room for one task (its dequeue asked for one): token and room are gone, the next task is pending (and wakes the workers).
      expect(await admin.hexists(k.parked, server)).toBe(0)
      expect(await admin.hexists(k.parkRoom, server)).toBe(0)
      const next = await run(enqueue("t:hand", { n: 2 }, { queue: "push-hand" }))
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([next.id])
      expect(await admin.hget(k.task(next.id), "state")).toBe("pending")
      expect(await takePushes("push-hand")).toEqual([])
    }))

  it("a park has room for the slots its dequeue left free: that many tasks are handed over under its one token, then token and room are gone", () =>
    present(async () => {
      const k = queueKeys("push-room")
      // A dequeue for three slots that finds one task: room for two.
      await putPending(admin, makeMsg("push-room", "r0"), Date.now())
      const tokens: Array<string> = []
      const rooms: Array<number> = []
      const got = await run(
        leaseFrom(["push-room"], 3, 30_000, {
          parking: {
            server,
            parked: (_q, t) => tokens.push(t),
            room: (_q, _t, room) => rooms.push(room)
          }
        })
      )
      expect(got.tasks.map((t) => t.msg.id)).toEqual(["r0"])
      expect(rooms).toEqual([2])
      expect(await admin.hget(k.parked, server)).toBe(tokens[0])
      expect(await admin.hget(k.parkRoom, server)).toBe("2")
      await markAlive("push-room")
      const a = await run(enqueue("t", 1, { queue: "push-room" }))
      // Room left: the token stays.
      expect(await admin.hget(k.parked, server)).toBe(tokens[0])
      expect(await admin.hget(k.parkRoom, server)).toBe("1")
      const b = await run(enqueue("t", 2, { queue: "push-room" }))
      expect(await admin.hexists(k.parked, server)).toBe(0)
      expect(await admin.hexists(k.parkRoom, server)).toBe(0)
      const pushes = await takePushes("push-room")
      expect(pushes.map((p) => [p.id, p.token])).toEqual([
        [a.id, tokens[0]],
        [b.id, tokens[0]]
      ])
      for (const id of [a.id, b.id]) expect(Number(await admin.zscore(k.lease, id))).toBe(Number(tokens[0]))
      // The room used up: the next task is pending.
      const c = await run(enqueue("t", 3, { queue: "push-room" }))
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([c.id])
      expect(await takePushes("push-room")).toEqual([])
    }))

  it("parked workers take turns; a token without a room (left by an earlier version) is used once", async () => {
    const k = queueKeys("push-turns")
    const other = `${server}-other`
    await sub.subscribe(parkedPresenceChannel(server), parkedPresenceChannel(other))
    try {
      await park("push-turns", server, 2)
      await park("push-turns", other, 2)
      const ids: Array<string> = []
      for (let i = 0; i < 4; i++) ids.push((await run(enqueue("t", i, { queue: "push-turns" }))).id)
      const toMe = (await takePushes("push-turns")).map((p) => p.id)
      const toOther: Array<string> = []
      for (;;) {
        const m = await admin.rpopBuffer(k.pushList(other))
        if (m === null) break
        toOther.push(parsePush(m)!.id)
      }
      expect({ toMe, toOther }).toEqual({ toMe: [ids[0], ids[2]], toOther: [ids[1], ids[3]] })
      expect(await admin.hlen(k.parked)).toBe(0)
      expect(await admin.hlen(k.parkRoom)).toBe(0)
      // A token with no room field: one task.
      await admin.hset(k.parked, server, leaseScore(unixSeconds(Date.now() + 30_000)))
      const first = await run(enqueue("t", "a", { queue: "push-turns" }))
      const second = await run(enqueue("t", "b", { queue: "push-turns" }))
      expect((await takePushes("push-turns")).map((p) => p.id)).toEqual([first.id])
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([second.id])
      expect(await admin.hlen(k.parked)).toBe(0)
    } finally {
      await sub.unsubscribe(parkedPresenceChannel(server), parkedPresenceChannel(other))
    }
  })

  it("sets the hand-over list to expire a minute after the hand-over's lease (a dead worker's list does not stay)", () =>
    present(async () => {
      const k = queueKeys("push-ttl")
      const token = await park("push-ttl")
      await run(enqueue("t", "x", { queue: "push-ttl" }))
      expect(await admin.llen(k.pushList(server))).toBe(1)
      expect(await admin.call("EXPIRETIME", k.pushList(server))).toBe(leaseScoreExpirySec(token) + 60)
      await admin.del(k.pushList(server))
    }))

  it("writes the task as pending when nobody listens on the worker's presence channel (that worker is gone), and drops its token", async () => {
    const k = queueKeys("push-gone")
    await park("push-gone", "a-worker-that-died")
    const info = await run(enqueue("t", "x", { queue: "push-gone" }))
    expect(await admin.hget(k.task(info.id), "state")).toBe("pending")
    expect(await admin.hget(k.task(info.id), "pending_since")).not.toBeNull()
    expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id])
    expect(await admin.llen(k.active)).toBe(0)
    expect(await admin.zcard(k.lease)).toBe(0)
    expect(await admin.hlen(k.parked)).toBe(0)
    expect(await admin.hlen(k.parkRoom)).toBe(0)
    expect(await admin.exists(k.pushList("a-worker-that-died"))).toBe(0)
    await waitFor(
      "the wake-up",
      () => wakes,
      (w) => w.includes("push-gone")
    )
  })

  it("skips a damaged token (not a lease score) or hand-over list (wrong type): the task is pending, the enqueue succeeds, the token is dropped", () =>
    present(async () => {
      const k = queueKeys("push-damaged")
      for (const bad of ["not-a-number", "inf", "nan", "-5"]) {
        await admin.hset(k.parked, server, bad)
        const info = await run(enqueue("t", bad, { queue: "push-damaged" }))
        expect(await admin.hget(k.task(info.id), "state")).toBe("pending")
        expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id])
        expect(await admin.hlen(k.parked)).toBe(0)
        expect(await takePushes("push-damaged")).toEqual([])
        await admin.del(k.pending)
      }
      // A hand-over list of the wrong type: that worker is skipped before anything is written.
      await admin.set(k.pushList(server), "not a list")
      await park("push-damaged")
      const info = await run(enqueue("t", "list", { queue: "push-damaged" }))
      expect(await admin.hget(k.task(info.id), "state")).toBe("pending")
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id])
      expect(await admin.llen(k.active)).toBe(0)
      expect(await admin.zcard(k.lease)).toBe(0)
      expect(await admin.hlen(k.parked)).toBe(0)
      await admin.del(k.pending, k.pushList(server))
    }))

  it("a parked key of the wrong type (damaged) stops neither enqueue nor dequeue: no hand-over, no park, the task pending and then leased", async () => {
    const k = queueKeys("push-wrongtype")
    await admin.set(k.parked, "not a hash")
    const info = await run(enqueue("t", "x", { queue: "push-wrongtype" }))
    expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id])
    const tokens: Array<string> = []
    const got = await run(
      leaseFrom(["push-wrongtype"], 2, 30_000, { parking: { server, parked: (_q, t) => tokens.push(t) } })
    )
    expect(got.failedQueues).toEqual([])
    expect(got.tasks.map((t) => t.msg.id)).toEqual([info.id])
    expect(await admin.get(k.parked)).toBe("not a hash")
    await admin.del(k.parked)
  })

  it("keeps FIFO order and pauses: no hand-over while tasks are pending or the queue is paused", () =>
    present(async () => {
      const k = queueKeys("push-busy")
      await park("push-busy")
      await admin.lpush(k.pending, "already-waiting")
      const info = await run(enqueue("t", "x", { queue: "push-busy" }))
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id, "already-waiting"])
      expect(await admin.hget(k.parked, server)).not.toBeNull()
      expect(await takePushes("push-busy")).toEqual([])

      const p = queueKeys("push-paused")
      await park("push-paused")
      await admin.set(p.paused, Date.now())
      const paused = await run(enqueue("t", "x", { queue: "push-paused" }))
      expect(await admin.hget(p.task(paused.id), "state")).toBe("pending")
      expect(await admin.lrange(p.pending, 0, -1)).toEqual([paused.id])
      expect(await takePushes("push-paused")).toEqual([])
    }))
})

/** Runs `eff` with its Clock a TestClock set to `atMs`. */
const runAt = <A, E>(atMs: number, eff: Effect.Effect<A, E, Broker>) =>
  run(Effect.andThen(TestClock.setTime(atMs), eff).pipe(Effect.provide(TestClock.layer())))

/** The hand-over record of task `id` handed to `as` under `token` (lua/includes/pushToParked.lua). */
const recordOf = (token: string, id: string, as = server) => `${token}\n${Buffer.byteLength(as)}\n${as}${id}`

describe("a hand-over goes only to a worker alive now, under a lease safely ahead", () => {
  it("uses a token only while 7 s or more of its lease are left at the enqueue's now: later the task is pending and the token dropped", () =>
    present(async () => {
      const queue = "push-lease-left"
      const k = queueKeys(queue)
      const parkedAt = 1_800_000_000_000
      // A park for 30 s (the default lease) at parkedAt; its expiry second is parkedAt + 30 s.
      const parkAt = async () => {
        const tokens: Array<string> = []
        await runAt(parkedAt, leaseFrom([queue], 1, 30_000, { parking: { server, parked: (_q, t) => tokens.push(t) } }))
        await markAlive(queue)
        return tokens[0]!
      }
      await parkAt()
      // 23 s later, 7 s are left: handed over.
      const inTime = await runAt(parkedAt + 23_000, enqueue("t", 1, { queue }))
      expect(await admin.hget(k.task(inTime.id), "state")).toBe("active")
      expect((await takePushes(queue)).map((p) => p.id)).toEqual([inTime.id])
      await admin.del(k.active, k.lease, k.handover)
      // 23.001 s later, less than 7 s: pending, the token gone (the worker parks again when it looks).
      await parkAt()
      const late = await runAt(parkedAt + 23_001, enqueue("t", 2, { queue }))
      expect(await admin.hget(k.task(late.id), "state")).toBe("pending")
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([late.id])
      expect(await admin.hexists(k.parked, server)).toBe(0)
      expect(await admin.hexists(k.parkRoom, server)).toBe(0)
      expect(await takePushes(queue)).toEqual([])
      await admin.del(k.pending)
      // Long after the lease ran out (a worker stalled for minutes, still subscribed): pending.
      await parkAt()
      const stale = await runAt(parkedAt + 120_000, enqueue("t", 3, { queue }))
      expect(await admin.hget(k.task(stale.id), "state")).toBe("pending")
      expect(await admin.zcard(k.lease)).toBe(0)
      expect(await takePushes(queue)).toEqual([])
    }))

  it("hands nothing to a worker still subscribed but without a liveness mark (stalled): the task is pending and its token dropped", () =>
    present(async () => {
      const queue = "push-stalled"
      const k = queueKeys(queue)
      await park(queue)
      // The mark expires 3 s after a worker's event loop last ran its tick.
      await admin.del(k.alive(server))
      const info = await run(enqueue("t", 1, { queue }))
      expect(await admin.hget(k.task(info.id), "state")).toBe("pending")
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([info.id])
      expect(await admin.zcard(k.lease)).toBe(0)
      expect(await admin.hexists(k.parked, server)).toBe(0)
      expect(await admin.hexists(k.parkRoom, server)).toBe(0)
      expect(await takePushes(queue)).toEqual([])
      await waitFor(
        "the wake-up",
        () => wakes,
        (w) => w.includes(queue)
      )
    }))
})

describe("a hand-over is confirmed by its worker, or goes back to pending", () => {
  /** Parks `server` on `queue` at `atMs` with room for `slots`, and hands it one task per payload at `atMs`; returns the token and the ids. */
  const handOverAt = async (queue: string, atMs: number, payloads: ReadonlyArray<number>) => {
    const tokens: Array<string> = []
    await runAt(
      atMs,
      leaseFrom([queue], payloads.length, 30_000, { parking: { server, parked: (_q, t) => tokens.push(t) } })
    )
    await markAlive(queue)
    const ids: Array<string> = []
    for (const n of payloads) ids.push((await runAt(atMs, enqueue("t", n, { queue }))).id)
    return { token: tokens[0]!, ids }
  }

  it("records each hand-over as unconfirmed for 5 s; the worker's confirmation renews its mark, drops the record and gives a task it runs its own lease", () =>
    present(async () => {
      const queue = "push-confirm"
      const k = queueKeys(queue)
      const at = 1_800_000_000_000
      const { token, ids } = await handOverAt(queue, at, [1, 2])
      // (two records of one score are in member order)
      expect(await admin.zrange(k.handover, "0", "-1", "WITHSCORES")).toEqual(
        ids
          .map((id) => recordOf(token, id))
          .sort()
          .flatMap((record) => [record, String(at + 5000)])
      )
      // The second one finished before the worker confirmed it (no longer leased).
      await admin.zrem(k.lease, ids[1]!)
      await admin.del(k.alive(server))
      const expiresSec = unixSeconds(at + 1000 + 30_000)
      const held = await run(
        runScript(confirmHandoversScript, {
          queue,
          server,
          markTtlMs: 3000,
          leaseExpiresAtSec: expiresSec,
          received: ids.map((id) => ({ token, id }))
        })
      )
      expect(held).toEqual([ids[0]])
      expect(await admin.zcard(k.handover)).toBe(0)
      expect(Number(await admin.zscore(k.lease, ids[0]!))).toBe(expiresSec)
      const ttl = await admin.pttl(k.alive(server))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(3000)
      // A confirmation again (its reply lost) changes nothing: the lease is the worker's already.
      expect(
        await run(
          runScript(confirmHandoversScript, {
            queue,
            server,
            markTtlMs: 3000,
            leaseExpiresAtSec: expiresSec + 1,
            received: [{ token, id: ids[0]! }]
          })
        )
      ).toEqual([])
      expect(Number(await admin.zscore(k.lease, ids[0]!))).toBe(expiresSec)
      // Nothing to reclaim, whenever it runs.
      expect(await run(runScript(reclaimHandoversScript, { queue, nowMs: at + 60_000, max: 100 }))).toBe(0)
      expect(await admin.lrange(k.active, 0, -1)).toEqual([ids[1], ids[0]])
    }))

  it("gives an unconfirmed hand-over back 5 s after it was handed over: off the worker's list, at the head of pending, not counted as an attempt", () =>
    present(async () => {
      const queue = "push-reclaim"
      const k = queueKeys(queue)
      const at = 1_800_000_000_000
      const { ids } = await handOverAt(queue, at, [1, 2])
      const [popped, waiting] = ids as [string, string]
      // The worker popped the first (then froze before confirming it); the second still waits on its list.
      const first = parsePush((await admin.rpopBuffer(k.pushList(server)))!)!
      expect(first.id).toBe(popped)
      // One more task arrives meanwhile (pending: the worker's room is used up).
      const later = await runAt(at + 1000, enqueue("t", 3, { queue }))
      expect(await run(runScript(reclaimHandoversScript, { queue, nowMs: at + 4999, max: 100 }))).toBe(0)
      expect(await run(runScript(reclaimHandoversScript, { queue, nowMs: at + 5000, max: 100 }))).toBe(2)
      expect(await admin.zcard(k.handover)).toBe(0)
      expect(await admin.zcard(k.lease)).toBe(0)
      expect(await admin.llen(k.active)).toBe(0)
      // The worker, should it wake up, finds nothing more on its list.
      expect(await admin.llen(k.pushList(server))).toBe(0)
      // Taken before the task that came later (the worker pops from the right): the hand-overs in their order.
      const order: Array<string> = []
      for (;;) {
        const id = await admin.rpop(k.pending)
        if (id === null) break
        order.push(id)
      }
      expect(order.slice(-1)).toEqual([later.id])
      expect(new Set(order.slice(0, 2))).toEqual(new Set([popped, waiting]))
      for (const id of [popped, waiting]) {
        const hash = await admin.hgetall(k.task(id))
        expect(hash.state).toBe("pending")
        expect(hash.pending_since).toBe(`${BigInt(at + 5000) * 1_000_000n}`)
        // Not an attempt: the message is as enqueued (retried 0, no error).
        const msg = decodeTaskMessage((await admin.hgetBuffer(k.task(id), "msg"))!)
        expect({ retried: msg.retried, errorMsg: msg.errorMsg }).toEqual({ retried: 0, errorMsg: "" })
      }
    }))

  it("reclaims nothing whose lease moved (the worker's heartbeat held it) or that was given back already, and drops a damaged record", () =>
    present(async () => {
      const queue = "push-reclaim-kept"
      const k = queueKeys(queue)
      const at = 1_800_000_000_000
      const { ids } = await handOverAt(queue, at, [1, 2])
      await admin.zadd(k.lease, unixSeconds(at + 40_000), ids[0]!)
      await admin.zrem(k.lease, ids[1]!)
      await admin.zadd(k.handover, at, "no newline at all")
      expect(await run(runScript(reclaimHandoversScript, { queue, nowMs: at + 5000, max: 100 }))).toBe(0)
      expect(await admin.zcard(k.handover)).toBe(0)
      expect(await admin.lrange(k.active, 0, -1)).toEqual([ids[1], ids[0]])
      expect(await admin.llen(k.pending)).toBe(0)
    }))
})

describe("the worker's side of a hand-over (makeParking)", () => {
  /**
   * The intake side a parking state feeds, as the fetch loop's intake gives it: `idle` and `slot`
   * say whether the loop waits idle with a free slot (then a push starts at once, into `started`).
   */
  const testIntake = (over: Partial<HandoverIntake> & { idle?: boolean } = {}) => {
    const side = {
      idle: over.idle ?? false,
      slot: true,
      raised: 0,
      reparked: 0,
      started: [] as Array<{ id: string; leaseExpiresAtMs: number }>
    }
    const intake: HandoverIntake = {
      raise: () => void side.raised++,
      nowMs: () => Date.now(),
      startsNow: () => side.idle && side.slot,
      start: (t) => void side.started.push({ id: t.msg.id, leaseExpiresAtMs: t.leaseExpiresAtMs }),
      repark: () => void side.reparked++,
      ...over
    }
    return { side, intake }
  }
  /** Parks `server` on `queue`, enqueues task `n` (handed to it), and gives the hand-over to `parking` as the receiver would. */
  const handOverTo = async (parking: ReturnType<typeof makeParking>, queue: string, n: number) => {
    const token = await park(queue)
    parking.parking.parked(queue, token)
    const info = await run(enqueue("t:handover", { n }, { queue }))
    const got = await takeRaw(queue)
    expect(got).toHaveLength(1)
    parking.onPush(got[0]!)
    return { id: info.id, token }
  }

  it("starts a push at once through the idle loop's direct start when a slot is free, in time and nothing waits before it; otherwise queues it for settle", async () => {
    await sub.subscribe(parkedPresenceChannel(server))
    try {
      const queue = "push-direct"
      const k = queueKeys(queue)
      let now = Date.now()
      const { side, intake } = testIntake({ idle: true, nowMs: () => now })
      const parking = makeParking(server, [queue], intake)
      const started = side.started

      // Started at once: the loop is not raised, nothing waits for settle. Its park had room for one
      // task (its dequeue asked for one): the idle loop is asked to park again.
      const first = await handOverTo(parking, queue, 1)
      expect(started).toEqual([{ id: first.id, leaseExpiresAtMs: leaseScoreExpirySec(first.token) * 1000 }])
      expect(side.raised).toBe(0)
      expect(side.reparked).toBe(1)
      expect(parking.pending()).toBe(false)

      // No free slot: queued for settle (the loop is raised), as without the direct start.
      side.slot = false
      const second = await handOverTo(parking, queue, 2)
      expect(started).toHaveLength(1)
      expect(side.raised).toBe(1)
      expect(parking.pending()).toBe(true)

      // Something waits before it: queued behind it, in arrival order, even with a slot free.
      side.slot = true
      const third = await handOverTo(parking, queue, 3)
      expect(started).toHaveLength(1)
      const both = await run(parking.settle(() => "start", Date.now()))
      expect(both.tasks.map((t) => t.msg.id)).toEqual([second.id, third.id])

      // Its lease already run out by the loop's clock: not started here; settle gives it back.
      const late = await handOverTo(parking, queue, 4)
      expect(started).toHaveLength(2)
      now = leaseScoreExpirySec(late.token) * 1000 + 10_000
      await handOverTo(parking, queue, 5)
      expect(started).toHaveLength(2)
      expect(parking.pending()).toBe(true)
      now = Date.now()

      // Cleared (the loop is busy again): queued.
      side.idle = false
      await run(parking.settle(() => "start", Date.now()))
      await handOverTo(parking, queue, 6)
      expect(started).toHaveLength(2)
      expect(parking.pending()).toBe(true)
      await run(parking.settle(() => "giveBack", Date.now()))

      // A task it started is its own at leave: not given back (its attempt is running).
      await run(parking.leave(Date.now()))
      expect(await admin.lrange(k.pending, 0, -1)).not.toContain(first.id)
      expect(await admin.lrange(k.pending, 0, -1)).not.toContain(late.id)
      await admin.del(k.pending, k.active, k.lease)
    } finally {
      await sub.unsubscribe(parkedPresenceChannel(server))
    }
  })

  it("asks the idle loop to park again only when the latest token's room is used up (not for a task under an older token)", () =>
    present(async () => {
      const queue = "push-repark"
      const { side, intake } = testIntake({ idle: true })
      const parking = makeParking(server, [queue], intake)
      const started = () => side.started.map((t) => t.id)
      // An older park with room for one, then the latest with room for two (as the worker's fetches leave them).
      const older = await park(queue)
      const latest = await park(queue, server, 2)
      parking.parking.parked(queue, older)
      parking.parking.room!(queue, older, 1)
      parking.parking.parked(queue, latest)
      parking.parking.room!(queue, latest, 2)
      const a = await run(enqueue("t", 1, { queue }))
      parking.onPush((await takeRaw(queue))[0]!)
      expect({ started: started(), reparked: side.reparked }).toEqual({ started: [a.id], reparked: 0 })
      // A straggler under the older token (its push was on its way): the latest token is untouched.
      const straggler = makeMsg(queue, "straggler")
      parking.onPush(
        Buffer.concat([
          Buffer.from(`${older}\n${queue.length}\n${queue}${straggler.id.length}\n${straggler.id}`),
          Buffer.from(encodeTaskMessage(straggler))
        ])
      )
      expect({ started: started(), reparked: side.reparked }).toEqual({ started: [a.id, straggler.id], reparked: 0 })
      const b = await run(enqueue("t", 3, { queue }))
      parking.onPush((await takeRaw(queue))[0]!)
      expect({ started: started(), reparked: side.reparked }).toEqual({
        started: [a.id, straggler.id, b.id],
        reparked: 1
      })
      await run(parking.leave(Date.now()))
    }))

  it("keeps a push it is told to wait with (still leased to it, for a bounded time), starts it later, or gives it back to pending", async () => {
    await sub.subscribe(parkedPresenceChannel(server))
    try {
      const queue = "push-wait"
      const k = queueKeys(queue)
      const { side, intake } = testIntake()
      const parking = makeParking(server, [queue], intake)
      const handOver = (n: number) => handOverTo(parking, queue, n)
      const first = await handOver(1)
      expect(parking.pending()).toBe(true)
      expect(side.raised).toBe(1)

      // Waiting: nothing started, nothing given back; the task stays leased to this worker under its token.
      const waited = await run(parking.settle(() => "wait", Date.now()))
      expect(waited.tasks).toEqual([])
      expect(parking.pending()).toBe(true)
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([])
      expect(await admin.hget(k.task(first.id), "state")).toBe("active")
      expect(Number(await admin.zscore(k.lease, first.id))).toBe(Number(first.token))

      // Then started: the same task, once.
      const started = await run(parking.settle(() => "start", Date.now()))
      expect(started.tasks.map((t) => t.msg.id)).toEqual([first.id])
      expect(parking.pending()).toBe(false)
      expect((await run(parking.settle(() => "start", Date.now()))).tasks).toEqual([])

      // Given back: at the head of pending, as before the hand-over, and no longer leased.
      const second = await handOver(2)
      const gaveBack = await run(parking.settle(() => "giveBack", Date.now()))
      expect(gaveBack.tasks).toEqual([])
      expect(parking.pending()).toBe(false)
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([second.id])
      expect(await admin.hget(k.task(second.id), "state")).toBe("pending")
      expect(await admin.zscore(k.lease, second.id)).toBeNull()
      await admin.del(k.pending)

      // Waiting is bounded (its lease is not extended meanwhile): still told to wait after
      // maxPushWaitMs, it is given back instead.
      const third = await handOver(3)
      const t0 = Date.now()
      expect((await run(parking.settle(() => "wait", t0))).tasks).toEqual([])
      expect((await run(parking.settle(() => "wait", t0 + maxPushWaitMs - 1))).tasks).toEqual([])
      expect(parking.pending()).toBe(true)
      expect(await admin.zscore(k.lease, third.id)).not.toBeNull()
      expect((await run(parking.settle(() => "wait", t0 + maxPushWaitMs))).tasks).toEqual([])
      expect(parking.pending()).toBe(false)
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([third.id])
      expect(await admin.zscore(k.lease, third.id)).toBeNull()
      await admin.del(k.pending)
    } finally {
      await sub.unsubscribe(parkedPresenceChannel(server))
    }
  })

  it("after a stall (its hand-over tick overdue by more than its liveness mark lives), starts nothing it was handed before: it goes back to pending", async () => {
    await sub.subscribe(parkedPresenceChannel(server))
    try {
      const queue = "push-woke"
      const k = queueKeys(queue)
      let now = Date.now()
      const { side, intake } = testIntake({ idle: true, nowMs: () => now })
      const parking = makeParking(server, [queue], intake)
      const started = () => side.started.map((t) => t.id)
      // In time (the tick ran 3 s ago): the push starts at once.
      parking.alive(now)
      now += livenessMarkTtlMs
      const inTime = await handOverTo(parking, queue, 1)
      expect(started()).toEqual([inTime.id])
      parking.alive(now)
      // The worker was frozen right after a hand-over reached it: its tick is late when the push is read.
      const token = await park(queue)
      parking.parking.parked(queue, token)
      const late = await run(enqueue("t:handover", { n: 2 }, { queue }))
      const [message] = await takeRaw(queue)
      now += livenessMarkTtlMs + 1
      parking.onPush(message!)
      expect(started()).toEqual([inTime.id])
      expect(parking.pending()).toBe(true)
      expect(side.raised).toBeGreaterThan(0)
      const got = await run(parking.settle(() => "start", now))
      expect(got.tasks).toEqual([])
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([late.id])
      expect(await admin.hget(k.task(late.id), "state")).toBe("pending")
      expect(await admin.zscore(k.lease, late.id)).toBeNull()
      // Both are confirmed at the next tick (the records go; only the first is still leased here).
      expect(parking.takeReceived().get(queue)).toEqual([
        { token: inTime.token, id: inTime.id },
        { token, id: late.id }
      ])
      // A tick that comes late counts as a stall too: a push under an earlier token is not started.
      await admin.del(k.pending)
      const token2 = await park(queue)
      parking.parking.parked(queue, token2)
      const third = await run(enqueue("t:handover", { n: 3 }, { queue }))
      const [message3] = await takeRaw(queue)
      now += livenessMarkTtlMs + 1
      parking.alive(now)
      parking.onPush(message3!)
      expect(started()).toEqual([inTime.id])
      await run(parking.settle(() => "start", now))
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([third.id])
    } finally {
      await sub.unsubscribe(parkedPresenceChannel(server))
    }
  })

  it("does not start a push whose lease ran out before it was read: it goes back to pending", async () => {
    await sub.subscribe(parkedPresenceChannel(server))
    try {
      const queue = "push-late"
      const k = queueKeys(queue)
      const parking = makeParking(server, [queue], testIntake().intake)
      const handOver = async (n: number) => {
        const { id, token } = await handOverTo(parking, queue, n)
        return { id, expiresAtMs: leaseScoreExpirySec(token) * 1000 }
      }
      // Read one millisecond before its lease runs out: started.
      const inTime = await handOver(1)
      const started = await run(parking.settle(() => "start", inTime.expiresAtMs - 1))
      expect(started.tasks.map((t) => t.msg.id)).toEqual([inTime.id])
      await admin.del(k.active, k.lease)

      // Read when it has run out (the worker was stalled for a lease): not started, even with a free
      // slot; back at the head of pending and no longer leased, so another fetch takes it once.
      const late = await handOver(2)
      let asked = 0
      const refused = await run(parking.settle(() => (asked++, "start"), late.expiresAtMs))
      expect(refused.tasks).toEqual([])
      expect(asked).toBe(0)
      expect(parking.pending()).toBe(false)
      expect(await admin.lrange(k.pending, 0, -1)).toEqual([late.id])
      expect(await admin.hget(k.task(late.id), "state")).toBe("pending")
      expect(await admin.zscore(k.lease, late.id)).toBeNull()
      expect(await admin.lrange(k.active, 0, -1)).toEqual([])
    } finally {
      await sub.unsubscribe(parkedPresenceChannel(server))
    }
  })
})
