import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { registerQueueScript } from "../../src/broker/enqueue.js"
import { Redis } from "../../src/redis/Redis.js"
import { flushTestDb, runWithRedis, testRedisUrl } from "../support/redis.js"
import { freePort } from "../support/redis-server.js"

beforeAll(flushTestDb)

/** A stream's internal write (what reaches the socket). */
type WriteFn = (this: unknown, ...args: Array<unknown>) => unknown

describe("Redis service", () => {
  it("connects, runs commands and closes when its scope closes", async () => {
    const status = await Effect.runPromise(
      Effect.gen(function* () {
        const r = yield* Redis
        yield* r.use("set", (c) => c.set("k", "v"))
        expect(yield* r.use("get", (c) => c.get("k"))).toBe("v")
        return r.client
      }).pipe(Effect.provide(Redis.layer({ url: testRedisUrl() })))
    )
    expect(status.status).toBe("end")
  })

  it("fails with a typed, clearly worded RedisConnectionError when nothing answers, within the connect timeout", async () => {
    const port = await freePort()
    const err = await Effect.runPromise(
      Redis.pipe(
        Effect.provide(Redis.layer({ url: `redis://:secret@127.0.0.1:${port}`, connectTimeoutMs: 1000 })),
        Effect.flip
      )
    )
    expect(err._tag).toBe("RedisConnectionError")
    expect(err.message).toContain(`127.0.0.1:${port}`)
    expect(err.message).not.toContain("secret")
  })

  it("refuses a database it cannot use instead of silently using database 0", async () => {
    const at = (path: string) => {
      const u = new URL(testRedisUrl())
      u.pathname = path
      return u.toString()
    }
    const fail = (options: Parameters<typeof Redis.layer>[0]) =>
      Effect.runPromise(Redis.pipe(Effect.provide(Redis.layer({ connectTimeoutMs: 2000, ...options })), Effect.flip))
    const outOfRange = await fail({ url: at("/100000") })
    expect(outOfRange._tag).toBe("RedisConnectionError")
    expect(outOfRange.message).toContain("the server refused database 100000")
    expect((await fail({ url: at("/abc") })).message).toContain(
      `the database in the URL's path must be a whole number ≥ 0, got "abc"`
    )
    expect((await fail({ url: testRedisUrl(), db: -1 })).message).toContain("db must be a whole number ≥ 0, got -1")
    expect((await fail({ url: "http://127.0.0.1:6379" })).message).toContain("scheme must be redis: or rediss:")
    // ioredis's scheme-less forms still work: "host:port".
    const bare = new URL(testRedisUrl())
    const hostPort = await Effect.runPromise(
      Effect.gen(function* () {
        const r = yield* Redis
        return yield* r.use("ping", (c) => c.ping())
      }).pipe(Effect.provide(Redis.layer({ url: `${bare.hostname}:${bare.port}` })))
    )
    expect(hostPort).toBe("PONG")
    // The database in a valid URL is the one used.
    const db = await Effect.runPromise(
      Effect.gen(function* () {
        const r = yield* Redis
        return yield* r.use("client info", (c) => c.call("CLIENT", "INFO") as Promise<string>)
      }).pipe(Effect.provide(Redis.layer({ url: at("/7") })))
    )
    expect(db).toMatch(/ db=7 /)
  })

  it("sends the script calls made in one tick, once four wait for replies, in one socket write, each with its own reply in order", async () => {
    const replies = await Effect.runPromise(
      Effect.gen(function* () {
        const r = yield* Redis
        const name = registerQueueScript.name
        // The first call sends the script's source (EVAL); the later ones are framed EVALSHAs.
        yield* r.script(name, ["rt:queues"], ["warm"])
        const socket = (r.client as unknown as { stream: { _writev?: WriteFn; _write: WriteFn } }).stream
        let writes = 0
        const writev = socket._writev
        const write = socket._write
        socket._write = function (this: unknown, ...a: Array<unknown>) {
          writes++
          return write.apply(this, a)
        }
        if (writev)
          socket._writev = function (this: unknown, ...a: Array<unknown>) {
            writes++
            return writev.apply(this, a)
          }
        const members = Array.from({ length: 50 }, (_, i) => `q${i % 25}`)
        const out = yield* Effect.forEach(members, (m) => r.script(name, ["rt:queues"], [m]), {
          concurrency: "unbounded"
        })
        // The first four go out at once, each on its own (fewer than four others were waiting for a
        // reply), the 46 after them together.
        expect(writes).toBe(5)
        return out
      }).pipe(Effect.provide(Redis.layer({ url: testRedisUrl() })))
    )
    // SADD: 1 for a new member, 0 for one added by an earlier call of the same write.
    expect(replies).toEqual([...Array(25).fill(1), ...Array(25).fill(0)])
  })
})
