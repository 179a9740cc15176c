import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TickSummary } from "../../src/processor/maintenance.js"
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runAt } from "./arrange.js"
import { invoke } from "./invoke.js"

const queues = ["critical", "default"]
const hourAgo = Date.now() - 3_600_000
const redis = rawClient()
let server: LambdaInvokeServer

const config = {
  queues,
  batch: 4,
  redis: { url: testRedisUrl() },
  log: () => {},
  aggregation: {
    gracePeriodMs: 1000,
    aggregator: (group: string, tasks: ReadonlyArray<{ readonly id: string }>) => ({
      type: "batch",
      payload: { group, ids: tasks.map((t) => t.id).sort() }
    })
  }
}
// Two containers: separate connections, running at the same time.
const tickA = createTickHandler(config)
const tickB = createTickHandler(config)

const sum = (xs: ReadonlyArray<TickSummary>, f: (s: TickSummary) => number) => xs.reduce((n, s) => n + f(s), 0)

beforeAll(async () => {
  await flushTestDb()
  server = await startLambdaInvokeServer({ tickA: { handler: (e) => tickA(e) }, tickB: { handler: (e) => tickB(e) } })
  // An hour ago: 11 tasks scheduled 1 min later per queue, 6 tasks leased for 30 s (long expired),
  // 5 tasks completed with 1 s retention, 3 groups of 3 tasks.
  await runAt(
    hourAgo,
    Effect.gen(function* () {
      for (const queue of queues)
        for (let i = 0; i < 11; i++) yield* enqueue("later", { i }, { queue, processIn: 60_000 })
      for (let i = 0; i < 6; i++) yield* enqueue("stuck", { i }, { queue: "critical", maxRetry: i % 2 })
      for (let i = 0; i < 5; i++) yield* enqueue("done", { i }, { queue: "default", retention: 1000 })
      const { tasks } = yield* dequeueLease({ queues: ["critical", "default"], count: 11, leaseMs: 30_000 })
      for (const t of tasks) if (t.msg.type === "done") yield* complete(t.msg)
      for (const g of ["a", "b", "c"])
        for (let i = 0; i < 3; i++) yield* enqueue("item", { g, i }, { queue: "default", group: g })
    })
  )
})
afterAll(async () => {
  await server.close()
  await Promise.all([tickA.runtime.dispose(), tickB.runtime.dispose()])
  redis.disconnect()
})

describe("Lambda maintenance tick", () => {
  it("two overlapping invocations, repeated until idle, move every task exactly once in bounded batches", async () => {
    const summaries: Array<TickSummary> = []
    for (let round = 0; round < 8; round++) {
      const [a, b] = await Promise.all([invoke(server.client(), "tickA", {}), invoke(server.client(), "tickB", {})])
      expect(a.functionError).toBeUndefined()
      expect(b.functionError).toBeUndefined()
      summaries.push(a.payload as TickSummary, b.payload as TickSummary)
    }
    for (const s of summaries) {
      expect(s.errors).toEqual([])
      for (const q of queues) expect(s.forwarded!.byQueue[q]).toBeLessThanOrEqual(4)
    }
    expect(sum(summaries, (s) => s.forwarded!.moved)).toBe(22)
    expect(sum(summaries, (s) => s.recovered!.retried + s.recovered!.archived)).toBe(6)
    expect(sum(summaries, (s) => s.recovered!.archived)).toBe(3)
    expect(sum(summaries, (s) => s.janitor!.deleted)).toBe(5)
    expect(sum(summaries, (s) => s.aggregated!.enqueued)).toBe(3)
    expect(sum(summaries, (s) => s.aggregated!.tasks)).toBe(9)

    const critical = await redis.lrange(queueKeys("critical").pending, 0, -1)
    const dflt = await redis.lrange(queueKeys("default").pending, 0, -1)
    expect(new Set(critical).size).toBe(critical.length)
    expect(new Set(dflt).size).toBe(dflt.length)
    expect(critical.length).toBe(11)
    expect(dflt.length).toBe(11 + 3)
    expect(await redis.zcard(queueKeys("critical").retry)).toBe(3)
    expect(await redis.zcard(queueKeys("critical").archived)).toBe(3)
    expect(await redis.zcard(queueKeys("default").completed)).toBe(0)
    expect(await redis.llen(queueKeys("critical").active)).toBe(0)
    // The aggregates name every grouped task once.
    const ids: Array<string> = []
    for (const id of dflt) {
      const msg = await redis.hget(queueKeys("default").task(id), "msg")
      if (msg?.includes("batch"))
        ids.push(...(JSON.parse(msg.slice(msg.indexOf("{"), msg.lastIndexOf("}") + 1)).ids as Array<string>))
    }
    expect(ids.length).toBe(9)
    expect(new Set(ids).size).toBe(9)
  })

  it("fails the invocation (function error) and still reports the other steps when a step fails", async () => {
    const broken = createTickHandler({
      ...config,
      aggregation: { gracePeriodMs: -5, aggregator: config.aggregation.aggregator }
    })
    server.define("broken", { handler: (e) => broken(e) })
    const res = await invoke(server.client(), "broken", {})
    await broken.runtime.dispose()
    expect(res.functionError).toBe("Unhandled")
    expect((res.payload as { errorMessage: string }).errorMessage).toContain("aggregate: ")
  })

  it("an extra step whose summary lists errors (a scheduler tick's) fails the invocation too", async () => {
    const withExtra = createTickHandler({
      ...config,
      extra: Effect.succeed({ enqueued: [], errors: [{ entryId: "e1", message: "occurrence failed: READONLY" }] })
    })
    server.define("withExtra", { handler: (e) => withExtra(e) })
    const res = await invoke(server.client(), "withExtra", {})
    await withExtra.runtime.dispose()
    expect(res.functionError).toBe("Unhandled")
    expect((res.payload as { errorMessage: string }).errorMessage).toContain("extra: occurrence failed: READONLY")
  })

  it("stayForMs: the tick stays after its passes and moves a task due meanwhile; never past the invocation's budget", async () => {
    const stayConfig = { queues: ["stay"], redis: { url: testRedisUrl() }, log: () => {}, stayForMs: 55_000 }
    const staying = createTickHandler(stayConfig)
    // A 4 s function: budget 3 s (a quarter kept to answer), less the 2 s reserve: it stays 1 s.
    server.define("staying", { handler: (e, context) => staying(e, context), timeoutMs: 4000 })
    await runAt(Date.now(), enqueue("soon", {}, { queue: "stay", processIn: 300, taskId: "due-in-300" }))
    await runAt(Date.now(), enqueue("later", {}, { queue: "stay", processIn: 20_000, taskId: "due-in-20000" }))
    const res = await invoke(server.client(), "staying", {})
    await staying.runtime.dispose()
    expect(res.functionError).toBeUndefined()
    const summary = res.payload as TickSummary
    expect(summary.errors).toEqual([])
    expect(summary.forwarded!.moved).toBe(1)
    expect(await redis.lrange(queueKeys("stay").pending, 0, -1)).toEqual(["due-in-300"])
    expect(await redis.zrange(queueKeys("stay").scheduled, "0", "-1")).toEqual(["due-in-20000"])
  })
})
