/**
 * A pipelined script batch runs its calls in order even when some of its scripts are not yet
 * cached on the server (a new server, or a script the process has not used before).
 */
import "../support/allLua.js"
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Redis } from "../../src/redis/Redis.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

let server: RedisServerHandle
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(() => server.stop())

it("keeps the order of a batch whose scripts are only partly cached", async () => {
  const paused = queueKeys("batch-order").paused
  const out = await Effect.runPromise(
    Effect.gen(function* () {
      const r = yield* Redis
      yield* r.use("script flush", (c) => c.script("FLUSH"))
      // `pause` gets cached by this call; `unpause` is not cached yet.
      yield* r.script("pauseQueue", [paused], [1])
      const replies = yield* r.scriptBatch([
        { script: "unpauseQueue", keys: [paused], args: [] },
        { script: "pauseQueue", keys: [paused], args: [9] }
      ])
      const stored = yield* r.use("get", (c) => c.get(paused))
      return { replies: replies.map((x) => (x.ok ? x.value : x.error.message)), stored }
    }).pipe(Effect.provide(Redis.layer({ url: server.url })))
  )
  // In order: unpause succeeds (the key existed), then pause stores 9.
  expect(out.stored).toBe("9")
  expect(out.replies.every((v) => typeof v !== "string" || !v.startsWith("NOSCRIPT"))).toBe(true)
})
