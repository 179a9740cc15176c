/**
 * NOSCRIPT recovery on a single node: after SCRIPT FLUSH (or a restart) the Redis service finds
 * its scripts missing and loads them again, for `script`, `scriptBuffer` and `scriptBatch`.
 * Runs on a private redis-server, so flushing its script cache touches no other test.
 */
import "../support/allLua.js"
import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Redis } from "../../src/redis/Redis.js"
import { luaScript } from "../../src/redis/scripts.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

let server: RedisServerHandle
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(() => server?.stop())

const run = <A, E>(eff: Effect.Effect<A, E, Redis>) =>
  Effect.runPromise(eff.pipe(Effect.provide(Redis.layer({ url: server.url }))) as Effect.Effect<A, unknown>)

const flush = Effect.gen(function* () {
  const r = yield* Redis
  yield* r.use("script flush", (c) => (c as IORedis).script("FLUSH"))
})
const loaded = (name: "pauseQueue" | "unpauseQueue") =>
  Effect.flatMap(Redis, (r) =>
    r.use("script exists", (c) => (c as IORedis).script("EXISTS", luaScript(name).sha) as Promise<Array<number>>)
  )

describe("Redis service reloads scripts after SCRIPT FLUSH (single node)", () => {
  const k = queueKeys("reload").paused

  it("`script` and `scriptBuffer` run a script the server no longer has, and leave it cached", async () => {
    const out = await run(
      Effect.gen(function* () {
        yield* flush
        const before = yield* loaded("pauseQueue")
        const first = yield* (yield* Redis).script("pauseQueue", [k], [42])
        const after = yield* loaded("pauseQueue")
        yield* flush
        const buf = yield* (yield* Redis).scriptBuffer("unpauseQueue", [k], [])
        return { before, first, after, buf, unpauseCached: yield* loaded("unpauseQueue") }
      })
    )
    expect(out.before).toEqual([0])
    expect(out.first).toBe(1)
    expect(out.after).toEqual([1])
    expect(out.buf).toBe(1)
    expect(out.unpauseCached).toEqual([1])
  })

  it("`scriptBatch` reloads the missing script and runs each call once, in order", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* Redis
        yield* flush
        const batch = yield* r.scriptBatch([
          { script: "pauseQueue", keys: [k], args: [1] },
          { script: "pauseQueue", keys: [k], args: [2] },
          { script: "pauseQueue", keys: [k], args: [3] }
        ])
        const stored = yield* r.use("get", (c) => c.get(k))
        return { batch, stored, cached: yield* loaded("pauseQueue") }
      })
    )
    expect(out.batch).toEqual([1, 0, 0].map((value) => ({ ok: true, value })))
    expect(out.stored).toBe("1")
    expect(out.cached).toEqual([1])
  })

  it("`scriptBatch` in buffer mode reloads the missing script too", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* Redis
        yield* flush
        return yield* r.scriptBatch([{ script: "unpauseQueue", keys: [k], args: [] }], { buffers: true })
      })
    )
    expect(out).toEqual([{ ok: true, value: 1 }])
  })
})
