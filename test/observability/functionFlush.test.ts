/**
 * A function invocation sends its spans and metrics before it returns: the Lambda processor
 * handler, invoked through the real AWS SDK against the loopback Invoke endpoint, with telemetry
 * exporting to a real OTLP/HTTP receiver whose export interval (an hour) never comes during the test.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import type { DrainSummary } from "../../src/processor/drain.js"
import { otlpLayer } from "../../src/observability/otlp.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { startLambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { attributeValue, type OtlpReceiver, startOtlpReceiver } from "../support/otlpReceiver.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { runNow } from "../aws-lambda/arrange.js"
import { invoke } from "../aws-lambda/invoke.js"

let receiver: OtlpReceiver
beforeAll(async () => {
  await flushTestDb()
  receiver = await startOtlpReceiver()
})
afterAll(() => receiver.close())

/** The value of a sum metric's data point with these attributes, in the last metrics request that has it. */
const sumPoint = (name: string, attrs: Record<string, string>): number | undefined => {
  let found: number | undefined
  for (const r of receiver.requests.filter((x) => x.path === "/v1/metrics")) {
    for (const rm of r.body.resourceMetrics ?? [])
      for (const sm of rm.scopeMetrics ?? [])
        for (const m of sm.metrics ?? []) {
          if (m.name !== name) continue
          for (const p of m.sum?.dataPoints ?? []) {
            if (Object.entries(attrs).every(([k, v]) => attributeValue(p.attributes, k) === v))
              found = Number(p.asInt ?? p.asDouble)
          }
        }
  }
  return found
}

describe("telemetry flush in a function invocation", () => {
  it("the Lambda processor handler returns only after its attempt spans and worker metrics reached the collector", async () => {
    const producer = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" }
    const traceparent = `00-${producer.traceId}-${producer.spanId}-01`
    await runNow(
      Effect.gen(function* () {
        yield* enqueue("fn:ok", { i: 1 }, { queue: "lq", headers: { traceparent } })
        yield* enqueue("fn:ok", { i: 2 }, { queue: "lq", headers: { traceparent } })
      })
    )
    const handler = createProcessorHandler({
      queues: ["lq"],
      metrics: true,
      redis: { url: testRedisUrl() },
      safetyMarginMs: 1000,
      handler: () => Effect.void,
      telemetry: otlpLayer({ url: receiver.url, serviceName: "fn-test", exportIntervalMs: 3_600_000 })
    })
    const server = await startLambdaInvokeServer({ processor: { timeoutMs: 20_000, handler } })
    try {
      const res = await invoke(server.client(), "processor", {})
      expect(res.functionError).toBeUndefined()
      expect((res.payload as DrainSummary).succeeded).toBe(2)
      // Nothing waited for: the invocation has returned, and the export interval has not come.
      const attempts = receiver.spans().filter((s) => s.name === "process lq")
      expect(attempts).toHaveLength(2)
      for (const s of attempts) {
        expect(s.traceId).toBe(producer.traceId)
        expect(s.parentSpanId).toBe(producer.spanId)
        expect(attributeValue(s.attributes, "asynq.outcome")).toBe("completed")
      }
      expect(sumPoint("asynq_worker_attempts_total", { queue: "lq", type: "fn:ok", outcome: "completed" })).toBe(2)
    } finally {
      await server.close()
      await handler.runtime.dispose()
    }
  })
})

describe("telemetry flush in a Cloud Function (the real Functions Framework over HTTP)", { timeout: 120_000 }, () => {
  it("the drain function answers only after its attempt spans and worker metrics reached the collector", async () => {
    const { startFunction } = await import("../gcp-functions/framework.js")
    const fn = await startFunction("drainTraced", {
      REDIS_URL: testRedisUrl(),
      ENQUEUE_SECRET: "s",
      OTLP_URL: receiver.url
    })
    try {
      await runNow(Effect.forEach([1, 2, 3], (i) => enqueue("gcf:ok", { i }, { queue: "traced" }), { discard: true }))
      const res = await fetch(fn.url, { method: "POST", headers: { "x-asynq-secret": "s" } })
      if (res.status !== 200) throw new Error(`drain answered ${res.status}: ${await res.text()}\n${fn.output()}`)
      expect(((await res.json()) as DrainSummary).succeeded).toBe(3)
      const attempts = receiver.spans().filter((s) => s.name === "process traced")
      expect(attempts).toHaveLength(3)
      expect(attempts.every((s) => attributeValue(s.attributes, "asynq.outcome") === "completed")).toBe(true)
      // No service name given and no OTEL_SERVICE_NAME: the resource is named "effect-asynq".
      const traces = receiver.requests.find(
        (r) => r.path === "/v1/traces" && JSON.stringify(r.body).includes('"process traced"')
      )!
      expect(attributeValue(traces.body.resourceSpans[0].resource.attributes, "service.name")).toBe("effect-asynq")
      expect(sumPoint("asynq_worker_attempts_total", { queue: "traced", type: "gcf:ok", outcome: "completed" })).toBe(3)
    } finally {
      await fn.stop()
    }
  })
})
