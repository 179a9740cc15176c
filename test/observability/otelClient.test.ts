/**
 * The Promise client under the OpenTelemetry JS SDK (the real @opentelemetry/api, SDK tracer,
 * AsyncLocalStorage context manager and W3C propagator): an enqueue made inside an active span
 * stores that span's traceparent (and the trace's tracestate) in the task's headers; so do the
 * enqueue modes (throttle, debounce, keep-last).
 */
import { context, propagation, trace, TraceFlags } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { TraceState, W3CTraceContextPropagator } from "@opentelemetry/core"
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient } from "../../src/client.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"

const provider = new BasicTracerProvider()
const contextManager = new AsyncLocalStorageContextManager()
const client = createClient({ url: testRedisUrl() })

beforeAll(async () => {
  await flushTestDb()
  trace.setGlobalTracerProvider(provider)
  context.setGlobalContextManager(contextManager.enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
})
afterAll(async () => {
  await client.close()
  trace.disable()
  context.disable()
  propagation.disable()
  await provider.shutdown()
})

const headersOf = (queue: string, id: string) =>
  Effect.runPromise(
    getTaskInfo(queue, id).pipe(Effect.provide(testBrokerLayer())) as Effect.Effect<
      { headers: Readonly<Record<string, string>> },
      unknown
    >
  ).then((i) => i.headers)

describe("Promise client with the OpenTelemetry SDK", () => {
  it("enqueue inside an active span stores its traceparent; the caller's headers are kept", async () => {
    const tracer = provider.getTracer("obs-test")
    const { info, ctx } = await tracer.startActiveSpan("POST /orders", async (span) => {
      const info = await client.enqueue("otel:a", { n: 1 }, { queue: "oq", headers: { tenant: "acme" } })
      span.end()
      return { info, ctx: span.spanContext() }
    })
    const headers = await headersOf("oq", info.id)
    expect(headers).toEqual({ tenant: "acme", traceparent: `00-${ctx.traceId}-${ctx.spanId}-01` })
  })

  it("the enqueue modes inside an active span store its traceparent too, next to the caller's headers", async () => {
    const tracer = provider.getTracer("obs-test")
    const { ids, ctx } = await tracer.startActiveSpan("PUT /docs/7", async (span) => {
      const t = await client.enqueueThrottled("otel:t", 1, { key: "t", window: 60_000 }, { queue: "oq" })
      const d = await client.enqueueDebounced("otel:d", 1, { key: "d", window: 60_000 }, { queue: "oq" })
      const k = await client.enqueueKeepLast("otel:k", 1, { key: "k" }, { queue: "oq", headers: { tenant: "acme" } })
      span.end()
      if (t.throttled) throw new Error("throttled")
      return { ids: [t.info.id, d.info.id, k.info.id], ctx: span.spanContext() }
    })
    const traceparent = `00-${ctx.traceId}-${ctx.spanId}-01`
    expect(await headersOf("oq", ids[0]!)).toEqual({ traceparent })
    expect(await headersOf("oq", ids[1]!)).toEqual({ traceparent })
    expect(await headersOf("oq", ids[2]!)).toEqual({ tenant: "acme", traceparent, "effect-asynq-keep-last": "k" })
  })

  it("a trace carrying a tracestate: enqueueMany stores traceparent and tracestate on every task", async () => {
    const parent = trace.setSpanContext(context.active(), {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState("vendor=opaque")
    })
    const tracer = provider.getTracer("obs-test")
    const { outcomes, ctx } = await context.with(parent, () =>
      tracer.startActiveSpan("consume", async (span) => {
        const outcomes = await client.enqueueMany([
          { type: "otel:b", options: { queue: "oq" } },
          { type: "otel:c", options: { queue: "oq" } }
        ])
        span.end()
        return { outcomes, ctx: span.spanContext() }
      })
    )
    expect(ctx.traceId).toBe("0af7651916cd43dd8448eb211c80319c")
    for (const o of outcomes) {
      if (!o.ok) throw new Error(o.error.message)
      expect(await headersOf("oq", o.info.id)).toEqual({
        traceparent: `00-${ctx.traceId}-${ctx.spanId}-01`,
        tracestate: "vendor=opaque"
      })
    }
  })

  it("no active span: no trace header", async () => {
    const info = await client.enqueue("otel:d", undefined, { queue: "oq" })
    expect(await headersOf("oq", info.id)).toEqual({})
  })
})
