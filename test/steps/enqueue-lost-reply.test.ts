/**
 * A lost reply: the connection drops after Redis ran the write script but before its reply
 * reached the client; ioredis reconnects and sends the same EVALSHA again. The resend must be
 * recognised as the same write: one task per call, and the call succeeds.
 * (test/support/replyDropProxy.ts sits between the client and the real Redis and loses the reply.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Result } from "effect"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { luaScript } from "../../src/redis/scripts.js"
import { queueKeys } from "../../src/wire/keys.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import { brokerLayerAt } from "../support/arrange.js"
import { scriptCallOf, type ReplyDropProxy, startReplyDropProxy } from "../support/replyDropProxy.js"
import { baseRedisUrl, flushTestDb, rawClient, testDb } from "../support/redis.js"

const c = rawClient()
let proxy: ReplyDropProxy

beforeAll(async () => {
  await flushTestDb()
  const u = new URL(baseRedisUrl())
  proxy = await startReplyDropProxy({ host: u.hostname, port: Number(u.port || 6379) })
})
afterAll(async () => {
  await proxy.close()
  c.disconnect()
})

/** Runs `eff` with a Broker connected through the proxy (a fresh connection per run). */
const viaProxy = <A, E>(eff: Effect.Effect<A, E, any>): Promise<A> =>
  Effect.runPromise(
    eff.pipe(Effect.provide(brokerLayerAt({ url: `redis://127.0.0.1:${proxy.port}/${testDb()}` }))) as Effect.Effect<
      A,
      unknown
    >
  )

const enqueueSha = luaScript("enqueue").sha
const enqueueBatchSha = luaScript("enqueueBatch").sha

/** The ids on a queue's pending list, and how many task hashes the queue has. */
const queueContents = async (queue: string) => {
  const pending = await c.lrange(queueKeys(queue).pending, 0, -1)
  const hashes = await c.keys(`${queueKeys(queue).taskPrefix}*`)
  return { pending, taskHashes: hashes.length }
}

/**
 * Enqueues one task through the proxy, losing the reply of its enqueue script. The queue is
 * registered and the script loaded by a first enqueue (then deleted), so the lossy call is a
 * single EVALSHA of `enqueue`.
 */
const enqueueLosingReply = (queue: string, payload: string, options: EnqueueOptions) =>
  viaProxy(
    Effect.gen(function* () {
      const warmup = yield* enqueue("warmup", "w", { queue })
      yield* Effect.promise(() => c.del(queueKeys(queue).task(warmup.id), queueKeys(queue).pending))
      const dropped = proxy.dropReplyOf(scriptCallOf("enqueue"))
      const info = yield* enqueue("t", payload, { ...options, queue })
      yield* Effect.promise(() => dropped)
      return info
    })
  )

describe("enqueue across a lost reply (proxy in front of real Redis)", () => {
  it("enqueue: the call succeeds and exactly one task is written", async () => {
    const before = proxy.dropped()
    const info = await enqueueLosingReply("lr-one", "p", {})
    expect(proxy.dropped()).toBe(before + 1)
    expect(info.state).toBe("pending")
    expect(await queueContents("lr-one")).toEqual({ pending: [info.id], taskHashes: 1 })
  })

  it("enqueue with a taskId: success (not TaskIdConflict), one task", async () => {
    const before = proxy.dropped()
    const info = await enqueueLosingReply("lr-id", "p", { taskId: "mine" })
    expect(proxy.dropped()).toBe(before + 1)
    expect(info.id).toBe("mine")
    expect(await queueContents("lr-id")).toEqual({ pending: ["mine"], taskHashes: 1 })
  })

  it("enqueue with unique: success (not DuplicateTask), one task, the lock held by it", async () => {
    const before = proxy.dropped()
    const info = await enqueueLosingReply("lr-uniq", "p", { unique: 60_000 })
    expect(proxy.dropped()).toBe(before + 1)
    expect(await queueContents("lr-uniq")).toEqual({ pending: [info.id], taskHashes: 1 })
    expect(await c.get(uniqueKey("lr-uniq", "t", new TextEncoder().encode("p")))).toBe(info.id)
  })

  it("enqueueMany(100) whose one batch reply is lost: 100 successes, exactly 100 tasks", async () => {
    const queue = "lr-many"
    const before = proxy.dropped()
    const results = await viaProxy(
      Effect.gen(function* () {
        const warmup = yield* enqueue("warmup", "w", { queue })
        yield* Effect.promise(() => c.del(queueKeys(queue).task(warmup.id), queueKeys(queue).pending))
        // The 100 writes go as one enqueueBatch call; its reply is lost (the connection with it), so
        // every write is sent again as the same write.
        const dropped = proxy.dropReplyOf(scriptCallOf("enqueueBatch"))
        const items = Array.from({ length: 100 }, (_, i) => ({ type: "t", payload: { i }, options: { queue } }))
        const out = yield* enqueueMany(items)
        yield* Effect.promise(() => dropped)
        return out
      })
    )
    expect(proxy.dropped()).toBe(before + 1)
    expect(results.filter(Result.isFailure).map((r) => r.failure.message)).toEqual([])
    const ids = results.map((r) => (Result.isSuccess(r) ? r.success.id : ""))
    const { pending, taskHashes } = await queueContents(queue)
    expect(taskHashes).toBe(100)
    expect(pending.length).toBe(100)
    expect(new Set(pending)).toEqual(new Set(ids))
  })
})
