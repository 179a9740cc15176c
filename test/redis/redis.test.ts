import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { Redis } from "../../src/redis/Redis.js"
import { flushTestDb, runWithRedis, testRedisUrl } from "../support/redis.js"
import { freePort } from "../support/redis-server.js"

beforeAll(flushTestDb)

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
      Redis.pipe(Effect.provide(Redis.layer({ url: `redis://:secret@127.0.0.1:${port}`, connectTimeoutMs: 1000 })), Effect.flip)
    )
    expect(err._tag).toBe("RedisConnectionError")
    expect(err.message).toContain(`127.0.0.1:${port}`)
    expect(err.message).not.toContain("secret")
  })
})
