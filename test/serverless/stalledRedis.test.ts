/**
 * A stalled Redis never hangs a serverless invocation past its time (issue 18): the handlers'
 * command timeout (2000 ms by default) and the invocation budget (remaining time less a reserve)
 * end it with a clear error, and nothing is lost. Each case runs against its own redis-server
 * (CLIENT PAUSE stops the whole server) or a TCP server that accepts and never answers.
 */
import { createServer, type Server, type Socket } from "node:net"
import * as Effect from "effect/Effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { InvocationTimeout } from "../../adapters/shared/warmRuntime.js"
import type { LambdaContext } from "../../adapters/aws-lambda/types.js"
import { Redis } from "../../src/redis/Redis.js"
import { queueKeys } from "../../src/wire/keys.js"
import { httpEvent } from "../aws-lambda/invoke.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

let server: RedisServerHandle
let raw: IORedis
let silent: Server
let silentUrl: string
const silentSockets = new Set<Socket>()

beforeAll(async () => {
  server = await startRedisServer()
  raw = new IORedis(server.url)
  silent = createServer((s) => {
    silentSockets.add(s) // accepts the connection and never answers
    s.on("error", () => {})
  })
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
  silentUrl = `redis://127.0.0.1:${(silent.address() as { port: number }).port}`
})
afterAll(async () => {
  raw.disconnect()
  for (const s of silentSockets) s.destroy()
  await new Promise<void>((resolve) => silent.close(() => resolve()))
  await server.stop()
})

/** A Lambda context with `ms` left when the invocation starts. */
const context = (ms: number): LambdaContext => {
  const deadline = Date.now() + ms
  return { functionName: "f", awsRequestId: "r", getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) }
}
const secret = "stall-secret"
const enqueueBody = (n: number) => JSON.stringify({ type: "job", payload: { n }, options: { queue: "stall" } })

describe("a stalled Redis ends an invocation with a clear error", () => {
  it("warm enqueue under CLIENT PAUSE: 503 backend_unavailable from the command timeout, the cause logged", async () => {
    const logged: Array<string> = []
    // 500 ms per command: the write and its two resends (a timed-out reply may be lost) time out in 1.5 s.
    const handler = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: server.url, commandTimeoutMs: 500 },
      log: (l) => logged.push(l)
    })
    const ok = await handler(httpEvent(enqueueBody(1), { "x-asynq-secret": secret }), context(10_000))
    expect(ok.statusCode).toBe(200)
    await raw.call("CLIENT", "PAUSE", "4000", "ALL")
    const res = await handler(httpEvent(enqueueBody(2), { "x-asynq-secret": secret }), context(10_000))
    expect(res.statusCode).toBe(503)
    expect(JSON.parse(res.body).error.code).toBe("backend_unavailable")
    expect(logged.join("\n")).toContain("Command timed out")
    await raw.call("CLIENT", "UNPAUSE")
    await handler.runtime.dispose()
  }, 20_000)

  it("warm enqueue with less time left than the command timeout: 503 from the invocation budget", async () => {
    const logged: Array<string> = []
    const handler = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: server.url },
      log: (l) => logged.push(l)
    })
    expect((await handler(httpEvent(enqueueBody(3), { "x-asynq-secret": secret }), context(10_000))).statusCode).toBe(
      200
    )
    await raw.call("CLIENT", "PAUSE", "3000", "ALL")
    // 1 000 ms left: the budget (750 ms) ends before the 2 000 ms command timeout.
    const res = await handler(httpEvent(enqueueBody(4), { "x-asynq-secret": secret }), context(1000))
    expect(res.statusCode).toBe(503)
    expect(logged.join("\n")).toContain("ran out while it was waiting for Redis")
    await raw.call("CLIENT", "UNPAUSE")
    await handler.runtime.dispose()
  }, 20_000)

  it("processor drain with Redis paused during dequeue: returns its summary naming the dequeue's timed-out RedisError (issue 29); nothing is lost", async () => {
    await raw.del(...Object.values(queueKeys("work")).filter((v): v is string => typeof v === "string"))
    const seen: Array<string> = []
    const processor = createProcessorHandler({
      queues: ["work"],
      safetyMarginMs: 2000,
      redis: { url: server.url },
      handler: (task) => Effect.sync(() => void seen.push(task.id))
    })
    const enq = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: server.url } })
    // Warm the processor's connection first (an empty drain).
    expect((await processor({}, context(10_000))).stoppedBecause).toBe("empty")
    for (let i = 0; i < 3; i++)
      expect(
        (
          await enq(
            httpEvent(JSON.stringify({ type: "job", payload: { i }, options: { queue: "work" } }), {
              "x-asynq-secret": secret
            })
          )
        ).statusCode
      ).toBe(200)
    await raw.call("CLIENT", "PAUSE", "5000", "ALL")
    // Every queue the drain visited failed (the only one): the invocation returns what it did (nothing
    // here) with that error, a RedisError naming the step, after the command timeout and well
    // before the function's time.
    const summary = await processor({}, context(8000))
    expect(summary).toMatchObject({
      succeeded: 0,
      stoppedBecause: "redis-unavailable",
      error: expect.stringMatching(/^script dequeueLease: Command timed out/)
    })
    expect(seen).toEqual([])
    await raw.call("CLIENT", "UNPAUSE")
    // Nothing lost: a dequeue that timed out on the client may still have run on the server once
    // the pause ended (its lease then expires and the recoverer returns it); the rest is pending.
    const k = queueKeys("work")
    expect((await raw.llen(k.pending)) + (await raw.zcard(k.lease))).toBe(3)
    await processor.runtime.dispose()
    await enq.runtime.dispose()
  }, 30_000)

  it("processor drain with Redis paused mid-invocation (while a task runs): the outcome write times out and is given up, the drain returns its summary, nothing is lost", async () => {
    const k = queueKeys("midway")
    const processor = createProcessorHandler({
      queues: ["midway"],
      safetyMarginMs: 4000,
      redis: { url: server.url },
      // The task's own work stalls Redis: its outcome cannot be written.
      handler: () => Effect.promise(() => raw.call("CLIENT", "PAUSE", "9000", "WRITE"))
    })
    const enq = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: server.url } })
    expect(
      (
        await enq(
          httpEvent(JSON.stringify({ type: "job", options: { queue: "midway" } }), { "x-asynq-secret": secret })
        )
      ).statusCode
    ).toBe(200)
    // The write is retried until a quarter of the margin is left, then given up; the invocation's
    // own budget (an eighth of the margin before the deadline) is not reached.
    const summary = await processor({}, context(8000))
    expect(summary).toMatchObject({ succeeded: 0, gaveUp: 1, stoppedBecause: "redis-unavailable" })
    expect(summary.remainingMs).toBeGreaterThan(0)
    await raw.call("CLIENT", "UNPAUSE")
    // Nothing lost: the task is still active under its lease (recover returns it) or was completed
    // by a write that ran once the pause ended.
    expect((await raw.zcard(k.lease)) + Number(await raw.exists(k.processedTotal))).toBeGreaterThanOrEqual(1)
    await processor.runtime.dispose()
    await enq.runtime.dispose()
  }, 30_000)

  it("a server that accepts TCP and never answers: the enqueue answers 503 within the invocation's budget", async () => {
    const logged: Array<string> = []
    const handler = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: silentUrl },
      log: (l) => logged.push(l)
    })
    const res = await handler(httpEvent(enqueueBody(5), { "x-asynq-secret": secret }), context(1500))
    expect(res.statusCode).toBe(503)
    expect(logged.join("\n")).toContain("Redis did not answer within the invocation's remaining time")
    await handler.runtime.dispose()
  }, 20_000)

  it("a server that never answers: the processor invocation rejects with InvocationTimeout (connect) before its time is up", async () => {
    const processor = createProcessorHandler({
      queues: ["work"],
      safetyMarginMs: 1000,
      redis: { url: silentUrl },
      handler: () => Effect.void
    })
    const error = await processor({}, context(2000)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvocationTimeout)
    expect((error as InvocationTimeout).phase).toBe("connect")
    await processor.runtime.dispose()
  }, 20_000)

  it("without an invocation budget, connectTimeoutMs bounds the whole open (the handshake too), not only the TCP connect", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(Effect.asVoid(Redis), Redis.layer({ url: silentUrl, connectTimeoutMs: 300 }))
    )
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("no answer within 300 ms")
  }, 20_000)
})
