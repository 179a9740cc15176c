/**
 * Traces across enqueue → process, against real Redis and a real OTLP/HTTP receiver on loopback:
 * an Effect enqueue inside a span stores a W3C traceparent header, and the worker's attempt span
 * (exported by effect's OtlpTracer) continues that trace with OpenTelemetry's messaging attributes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer, References, type Scope } from "effect"
import type { Redis as IORedis } from "ioredis"
import * as Server from "../../src/processor/Server.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { enqueueDebounced } from "../../src/steps/enqueueDebounced.js"
import { enqueueKeepLast } from "../../src/steps/enqueueKeepLast.js"
import { enqueueThrottled } from "../../src/steps/enqueueThrottled.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { SkipRetry } from "../../src/processor/errors.js"
import { otlpLayer } from "../../src/observability/otlp.js"
import { parseTraceparent } from "../../src/steps/traceContext.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { attributeValue, type OtlpReceiver, startOtlpReceiver } from "../support/otlpReceiver.js"
import { waitFor, waitForEffect } from "../support/waitFor.js"
import type { Broker } from "../../src/broker/Broker.js"
import { runWorker } from "../../adapters/worker/runWorker.js"
import { testRedisUrl } from "../support/redis.js"

let receiver: OtlpReceiver
let c: IORedis

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  receiver = await startOtlpReceiver()
})
afterAll(async () => {
  c.disconnect()
  await receiver.close()
})

const quiet = <A, E, R>(eff: Effect.Effect<A, E, R>) =>
  process.env.DEBUG_TESTS ? eff : eff.pipe(Effect.provideService(References.MinimumLogLevel, "Error"))

/** Runs a program with the test database's Broker and, if given, an OTLP tracer sending to the receiver (flushed when it ends). */
const run = <A, E>(program: Effect.Effect<A, E, Broker | Scope.Scope>, traced: boolean) =>
  Effect.runPromise(
    quiet(
      program.pipe(
        Effect.scoped,
        Effect.provide(
          traced
            ? Layer.merge(
                testBrokerLayer(),
                otlpLayer({ url: receiver.url, metrics: false, serviceName: "obs-test", exportIntervalMs: 60_000 })
              )
            : testBrokerLayer()
        )
      )
    ) as Effect.Effect<A, unknown>
  )

const headersOf = async (queue: string, id: string) => {
  const info = await Effect.runPromise(
    quiet(getTaskInfo(queue, id).pipe(Effect.provide(testBrokerLayer()))) as Effect.Effect<
      { headers: Readonly<Record<string, string>> },
      unknown
    >
  )
  return info.headers
}

const traceparentRe = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/

describe("trace propagation through task headers", () => {
  it("an Effect enqueue inside Effect.withSpan (OTLP tracer installed) stores a valid traceparent of that trace; the attempt's span continues it", async () => {
    const settled: Array<string> = []
    const { traceId, info } = await run(
      Effect.gen(function* () {
        const { traceId, info } = yield* Effect.gen(function* () {
          const span = yield* Effect.currentSpan
          const info = yield* enqueue(
            "trace:ok",
            { n: 1 },
            { queue: "tq1", headers: { tenant: "acme" }, retention: 3600 }
          )
          return { traceId: span.traceId, info }
        }).pipe(Effect.withSpan("http POST /signup"))
        const handle = yield* Server.start(
          {
            "trace:ok": () => Effect.void.pipe(Effect.withSpan("handler work"))
          },
          { queues: { tq1: 1 }, concurrency: 1, onSettled: (_m, o) => settled.push(o) }
        )
        yield* waitForEffect(
          "the task's outcome",
          Effect.sync(() => settled.length),
          (n) => n === 1
        )
        yield* handle.shutdown
        return { traceId, info }
      }),
      true
    )
    expect(settled).toEqual(["completed"])
    // The header was written to Redis with the task (and the caller's own header kept).
    const headers = await headersOf("tq1", info.id)
    expect(headers.tenant).toBe("acme")
    expect(headers.traceparent).toMatch(traceparentRe)
    const producer = parseTraceparent(headers.traceparent)!
    expect(producer.traceId).toBe(traceId)
    expect(producer.sampled).toBe(true)

    await waitFor(
      "the attempt span at the receiver",
      () => receiver.spans().filter((s) => s.name === "process tq1"),
      (s) => s.length === 1
    )
    const spans = receiver.spans()
    const attempt = spans.find((s) => s.name === "process tq1")!
    expect(attempt.traceId).toBe(traceId)
    expect(attempt.parentSpanId).toBe(producer.spanId)
    expect(attempt.kind).toBe(5) // consumer
    expect(attributeValue(attempt.attributes, "messaging.system")).toBe("asynq")
    expect(attributeValue(attempt.attributes, "messaging.destination.name")).toBe("tq1")
    expect(attributeValue(attempt.attributes, "messaging.message.id")).toBe(info.id)
    expect(attributeValue(attempt.attributes, "messaging.operation.type")).toBe("process")
    expect(attributeValue(attempt.attributes, "asynq.task.type")).toBe("trace:ok")
    expect(attributeValue(attempt.attributes, "asynq.task.retry_count")).toBe(0)
    expect(attributeValue(attempt.attributes, "asynq.outcome")).toBe("completed")
    expect(attempt.events.map((e) => e.name)).toEqual(["asynq.task.active", "asynq.task.completed"])
    expect(attempt.status.code).toBe(1)
    // The producer's span (Steps.enqueue) was exported too, and the handler's own span is a child of the attempt.
    expect(spans.find((s) => s.spanId === producer.spanId)?.name).toBe("Steps.enqueue")
    const work = spans.find((s) => s.name === "handler work")!
    expect(work.traceId).toBe(traceId)
    expect(work.parentSpanId).toBe(attempt.spanId)
  })

  it("a failed attempt's span has an error status with the handler's message, the outcome and the state move (one task retried, one archived)", async () => {
    const settled: Array<string> = []
    const ids = await run(
      Effect.gen(function* () {
        const ids = yield* Effect.gen(function* () {
          const a = yield* enqueue("trace:fail", undefined, { queue: "tq2", maxRetry: 3 })
          const b = yield* enqueue("trace:skip", undefined, { queue: "tq2" })
          return { retried: a.id, archived: b.id }
        }).pipe(Effect.withSpan("producer"))
        const handle = yield* Server.start(
          {
            "trace:fail": () => Effect.fail(new Error("smtp said no")),
            "trace:skip": () => Effect.fail(new SkipRetry("bad input"))
          },
          { queues: { tq2: 1 }, concurrency: 2, onSettled: (_m, o) => settled.push(o) }
        )
        yield* waitForEffect(
          "both outcomes",
          Effect.sync(() => settled.length),
          (n) => n === 2
        )
        yield* handle.shutdown
        return ids
      }),
      true
    )
    expect(settled.sort()).toEqual(["archived", "retried"])
    const spans = await waitFor(
      "two attempt spans",
      () => receiver.spans().filter((s) => s.name === "process tq2"),
      (s) => s.length === 2
    )
    const byId = (id: string) => spans.find((s) => attributeValue(s.attributes, "messaging.message.id") === id)!
    const retried = byId(ids.retried)
    expect(attributeValue(retried.attributes, "asynq.outcome")).toBe("retried")
    expect(retried.status).toMatchObject({ code: 2, message: "smtp said no" })
    const retryEvent = retried.events.find((e) => e.name === "asynq.task.retry")!
    expect(attributeValue(retryEvent.attributes, "error.message")).toBe("smtp said no")
    const archived = byId(ids.archived)
    expect(attributeValue(archived.attributes, "asynq.outcome")).toBe("archived")
    expect(archived.status.code).toBe(2)
    expect(archived.events.map((e) => e.name)).toContain("asynq.task.archived")
  })

  it("enqueueMany inside a span gives every task the same trace", async () => {
    const { traceId, infos } = await run(
      Effect.gen(function* () {
        const span = yield* Effect.currentSpan
        const rs = yield* enqueueMany([
          { type: "m:a", options: { queue: "tq3" } },
          {
            type: "m:b",
            options: {
              queue: "tq3",
              headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }
            }
          }
        ])
        return { traceId: span.traceId, infos: rs.map((r) => (r._tag === "Success" ? r.success : undefined)) }
      }).pipe(Effect.withSpan("batch")),
      true
    )
    const first = await headersOf("tq3", infos[0]!.id)
    expect(parseTraceparent(first.traceparent)?.traceId).toBe(traceId)
    // A traceparent the caller set itself is kept as it is.
    const second = await headersOf("tq3", infos[1]!.id)
    expect(second.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
  })

  it("the enqueue modes inside a span store its trace too", async () => {
    const { traceId, ids } = await run(
      Effect.gen(function* () {
        const span = yield* Effect.currentSpan
        const t = yield* enqueueThrottled("m:t", 1, { key: "t", window: 60_000 }, { queue: "tq-modes" })
        const d = yield* enqueueDebounced("m:d", 1, { key: "d", window: 60_000 }, { queue: "tq-modes" })
        const k = yield* enqueueKeepLast("m:k", 1, { key: "k" }, { queue: "tq-modes" })
        if (t.throttled) throw new Error("throttled")
        return { traceId: span.traceId, ids: [t.info.id, d.info.id, k.info.id] }
      }).pipe(Effect.withSpan("modes")),
      true
    )
    for (const id of ids) expect(parseTraceparent((await headersOf("tq-modes", id)).traceparent)?.traceId).toBe(traceId)
  })

  it("with no tracer installed, an enqueue inside Effect.withSpan stores no trace header (no cost, no made-up trace)", async () => {
    const info = await run(enqueue("plain", undefined, { queue: "tq4" }).pipe(Effect.withSpan("no tracer")), false)
    expect(await headersOf("tq4", info.id)).toEqual({})
  })

  it("runWorker with a telemetry layer: one span per attempt, sent when the worker shuts down", async () => {
    const settled: Array<string> = []
    const info = await run(enqueue("rw:ok", undefined, { queue: "tq5" }), false)
    const worker = await runWorker({
      redis: testRedisUrl(),
      queues: { tq5: 1 },
      handlers: { "rw:ok": async () => {} },
      logLevel: "Error",
      onSettled: (_m, o) => settled.push(o),
      telemetry: otlpLayer({ url: receiver.url, metrics: false, exportIntervalMs: 3_600_000 })
    })
    await waitFor(
      "the outcome",
      () => settled.length,
      (n) => n === 1
    )
    expect(receiver.spans().filter((s) => s.name === "process tq5")).toHaveLength(0)
    await worker.shutdown()
    const spans = receiver.spans().filter((s) => s.name === "process tq5")
    expect(spans.map((s) => attributeValue(s.attributes, "messaging.message.id"))).toEqual([info.id])
    // No traceparent on the task: the attempt starts its own trace.
    expect(spans[0]!.parentSpanId ?? "").toBe("")
  })

  it("a lost lease: the handler is stopped and the span says so (events asynq.handler.stopped with the reason, asynq.lease.lost)", async () => {
    const settled: Array<string> = []
    const started: Array<string> = []
    const id = await run(
      Effect.gen(function* () {
        const info = yield* enqueue("trace:hold", undefined, { queue: "tq6" }).pipe(Effect.withSpan("producer"))
        const handle = yield* Server.start(
          { "trace:hold": () => Effect.sync(() => void started.push(info.id)).pipe(Effect.andThen(Effect.never)) },
          { queues: { tq6: 1 }, leaseMs: 10_000, heartbeatIntervalMs: 50, onSettled: (_m, o) => settled.push(o) }
        )
        yield* Effect.promise(() =>
          waitFor(
            "the handler to start",
            () => started.length,
            (n) => n === 1
          )
        )
        yield* Effect.promise(() => c.zrem("asynq:{tq6}:lease", info.id))
        yield* Effect.promise(() =>
          waitFor(
            "the outcome",
            () => settled.length,
            (n) => n === 1
          )
        )
        yield* handle.shutdown
        return info.id
      }),
      true
    )
    expect(settled).toEqual(["lease-lost"])
    const [span] = await waitFor(
      "the attempt span",
      () => receiver.spans().filter((s) => s.name === "process tq6"),
      (s) => s.length === 1
    )
    expect(attributeValue(span!.attributes, "messaging.message.id")).toBe(id)
    expect(attributeValue(span!.attributes, "asynq.outcome")).toBe("lease-lost")
    expect(span!.events.map((e) => e.name)).toEqual(["asynq.task.active", "asynq.handler.stopped", "asynq.lease.lost"])
    expect(attributeValue(span!.events[1]!.attributes, "asynq.stop.reason")).toBe("lease-lost")
  })
})
