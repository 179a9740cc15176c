import type { Redis as IORedis } from "ioredis"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { createInspector, RuntimeClosed } from "../../src/inspector/promise.js"
import { makeBrokerRuntime, resolveRedisOptions } from "../../src/runtime/promiseRuntime.js"
import { queueKeys } from "../../src/wire/keys.js"
import { freePort, startRedisServer } from "../support/redis-server.js"
import { flushTestDb, rawClient, testDb, testRedisUrl } from "../support/redis.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

const withRedisUrl = async <A>(url: string | undefined, f: () => Promise<A>): Promise<A> => {
  const saved = process.env.REDIS_URL
  if (url === undefined) delete process.env.REDIS_URL
  else process.env.REDIS_URL = url
  try {
    return await f()
  } finally {
    if (saved === undefined) delete process.env.REDIS_URL
    else process.env.REDIS_URL = saved
  }
}

/** Connections to this file's database other than the raw checking client. */
const otherConnections = async () => {
  const me = await c.client("ID")
  const list = (await c.client("LIST")) as string
  return list.split("\n").filter((l) => l.includes(` db=${testDb()} `) && !l.startsWith(`id=${me} `)).length
}

describe("resolveRedisOptions (the one rule of every facade)", () => {
  it("an explicit url, cluster or sentinel wins; else REDIS_URL; else redis://127.0.0.1:6379; other options are kept", async () => {
    const cluster = [{ host: "10.0.0.1", port: 7000 }]
    const sentinel = { sentinels: [{ host: "10.0.0.2", port: 26379 }], name: "m" }
    await withRedisUrl("redis://from-env:6380/2", async () => {
      expect(resolveRedisOptions({ url: "redis://explicit:1", db: 3 })).toEqual({ url: "redis://explicit:1", db: 3 })
      expect(resolveRedisOptions("redis://as-string:2")).toEqual({ url: "redis://as-string:2" })
      expect(resolveRedisOptions({ cluster })).toEqual({ cluster })
      expect(resolveRedisOptions({ sentinel })).toEqual({ sentinel })
      expect(resolveRedisOptions()).toEqual({ url: "redis://from-env:6380/2" })
      expect(resolveRedisOptions({ password: "pw", connectTimeoutMs: 100 })).toEqual({
        url: "redis://from-env:6380/2",
        password: "pw",
        connectTimeoutMs: 100
      })
    })
    await withRedisUrl(undefined, async () => {
      expect(resolveRedisOptions()).toEqual({ url: "redis://127.0.0.1:6379" })
      expect(resolveRedisOptions({ db: 1 })).toEqual({ url: "redis://127.0.0.1:6379", db: 1 })
    })
  })
})

describe("createInspector on the shared runtime", () => {
  it("uses REDIS_URL when no address is given (as createClient does)", async () => {
    await c.sadd("asynq:queues", "rt-env")
    await c.lpush(queueKeys("rt-env").pending, "x")
    const queues = await withRedisUrl(testRedisUrl(), async () => {
      const inspector = createInspector()
      try {
        return await inspector.queues()
      } finally {
        await inspector.close()
      }
    })
    expect(queues).toContain("rt-env")
  })

  it("a failed first connection is not remembered: the next call connects once Redis is up", async () => {
    const port = await freePort()
    const inspector = createInspector({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 1000 })
    let server: Awaited<ReturnType<typeof startRedisServer>> | undefined
    try {
      const e = await inspector.queues().catch((x: unknown) => x)
      expect(e).toMatchObject({ _tag: "RedisConnectionError" })
      expect((e as Error).message).toContain(`127.0.0.1:${port}`)
      server = await startRedisServer([], port)
      expect(await inspector.queues()).toEqual([])
    } finally {
      await inspector.close()
      await server?.stop()
    }
  })

  it("close() is idempotent, closes the connection, and later calls reject with RuntimeClosed", async () => {
    const before = await otherConnections()
    const inspector = createInspector({ url: testRedisUrl() })
    await inspector.queues()
    expect(await otherConnections()).toBe(before + 1)
    await inspector.close()
    await inspector.close()
    expect(await otherConnections()).toBe(before)
    const e = await inspector.queues().catch((x: unknown) => x)
    expect(e).toBeInstanceOf(RuntimeClosed)
    expect((e as RuntimeClosed).message).toBe(
      "the effect-asynq inspector is closed; create a new one with createInspector()"
    )
    await createInspector({ url: testRedisUrl() }).close()
  })
})

describe("makeBrokerRuntime", () => {
  const queueCount = Effect.map(Broker, () => 1)

  it("builds once and reuses it; a close while the first connect is under way rejects that call and leaves no connection open", async () => {
    const before = await otherConnections()
    const runtime = makeBrokerRuntime({ url: testRedisUrl() })
    const [a, b] = await Promise.all([runtime.open(), runtime.open()])
    expect(a).toBe(b)
    expect(await runtime.open()).toBe(a)
    expect(await runtime.run(queueCount)).toBe(1)
    expect(await otherConnections()).toBe(before + 1)
    await runtime.close()
    expect(await otherConnections()).toBe(before)

    const racing = makeBrokerRuntime({ url: testRedisUrl() })
    const call = racing.run(queueCount).catch((x: unknown) => x)
    await racing.close()
    expect(await call).toBeInstanceOf(RuntimeClosed)
    expect(await otherConnections()).toBe(before)
  })

  it("reset() closes the connection and the next call opens a new one", async () => {
    const runtime = makeBrokerRuntime({ url: testRedisUrl() })
    try {
      const first = await runtime.open()
      await runtime.reset()
      const second = await runtime.open()
      expect(second).not.toBe(first)
      expect(await runtime.run(queueCount)).toBe(1)
    } finally {
      await runtime.close()
    }
  })
})
