/**
 * The queue metrics: asynq's x/metrics names, HELP, TYPE and labels, exactly, in Go registry
 * order; read from Redis at scrape time.
 */
import { type Effect, ManagedRuntime } from "effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { pauseQueue } from "../../src/inspector/control.js"
import type { QueueInfo } from "../../src/inspector/types.js"
import { queueMetricsText, renderQueueMetrics } from "../../src/observability/queueMetrics.js"
import { createClient } from "../../src/client.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"

const info = (queue: string, over: Partial<QueueInfo> = {}): QueueInfo => ({
  queue,
  memoryUsage: 2048,
  latencyMs: 1500,
  size: 10,
  groups: 0,
  pending: 4,
  active: 1,
  scheduled: 2,
  retry: 1,
  archived: 1,
  completed: 1,
  aggregating: 0,
  processed: 3,
  failed: 1,
  processedTotal: 120,
  failedTotal: 7,
  paused: false,
  timestamp: new Date(0),
  ...over
})

describe("renderQueueMetrics", () => {
  it("writes asynq's seven families with their exact HELP and TYPE, sorted by name, samples sorted by labels", () => {
    const text = renderQueueMetrics([info("low", { paused: true, latencyMs: 0 }), info("critical")])
    expect(text).toBe(
      [
        "# HELP asynq_queue_latency_seconds Number of seconds the oldest pending task is waiting in pending state to be processed.",
        "# TYPE asynq_queue_latency_seconds gauge",
        'asynq_queue_latency_seconds{queue="critical"} 1.5',
        'asynq_queue_latency_seconds{queue="low"} 0',
        "# HELP asynq_queue_memory_usage_approx_bytes Number of memory used by a given queue (approximated number by sampling).",
        "# TYPE asynq_queue_memory_usage_approx_bytes gauge",
        'asynq_queue_memory_usage_approx_bytes{queue="critical"} 2048',
        'asynq_queue_memory_usage_approx_bytes{queue="low"} 2048',
        "# HELP asynq_queue_paused_total Number of queues paused",
        "# TYPE asynq_queue_paused_total gauge",
        'asynq_queue_paused_total{queue="critical"} 0',
        'asynq_queue_paused_total{queue="low"} 1',
        "# HELP asynq_queue_size Number of tasks in a queue",
        "# TYPE asynq_queue_size gauge",
        'asynq_queue_size{queue="critical"} 10',
        'asynq_queue_size{queue="low"} 10',
        "# HELP asynq_tasks_enqueued_total Number of tasks enqueued; broken down by queue and state.",
        "# TYPE asynq_tasks_enqueued_total gauge",
        'asynq_tasks_enqueued_total{queue="critical",state="active"} 1',
        'asynq_tasks_enqueued_total{queue="critical",state="archived"} 1',
        'asynq_tasks_enqueued_total{queue="critical",state="completed"} 1',
        'asynq_tasks_enqueued_total{queue="critical",state="pending"} 4',
        'asynq_tasks_enqueued_total{queue="critical",state="retry"} 1',
        'asynq_tasks_enqueued_total{queue="critical",state="scheduled"} 2',
        'asynq_tasks_enqueued_total{queue="low",state="active"} 1',
        'asynq_tasks_enqueued_total{queue="low",state="archived"} 1',
        'asynq_tasks_enqueued_total{queue="low",state="completed"} 1',
        'asynq_tasks_enqueued_total{queue="low",state="pending"} 4',
        'asynq_tasks_enqueued_total{queue="low",state="retry"} 1',
        'asynq_tasks_enqueued_total{queue="low",state="scheduled"} 2',
        "# HELP asynq_tasks_failed_total Number of tasks failed; broken down by queue",
        "# TYPE asynq_tasks_failed_total counter",
        'asynq_tasks_failed_total{queue="critical"} 7',
        'asynq_tasks_failed_total{queue="low"} 7',
        "# HELP asynq_tasks_processed_total Number of tasks processed (both succeeded and failed); broken down by queue",
        "# TYPE asynq_tasks_processed_total counter",
        'asynq_tasks_processed_total{queue="critical"} 120',
        'asynq_tasks_processed_total{queue="low"} 120',
        ""
      ].join("\n")
    )
  })

  it("escapes label values (backslash, quote, newline) and writes nothing for no queues", () => {
    const text = renderQueueMetrics([info('we"ird\\q\nx')])
    expect(text).toContain('asynq_queue_size{queue="we\\"ird\\\\q\\nx"} 10\n')
    expect(renderQueueMetrics([])).toBe("")
  })
})

describe("queueMetricsText", () => {
  const rt = ManagedRuntime.make(brokerLayer(testRedisUrl()))
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>) => rt.runPromise(eff)
  beforeEach(() => flushTestDb())
  afterAll(() => rt.dispose())

  it("reads every queue from Redis at scrape time", async () => {
    expect(await run(queueMetricsText())).toBe("")
    const client = createClient({ url: testRedisUrl() })
    await client.enqueue("a", 1, { queue: "default" })
    await client.enqueue("b", 2, { queue: "default", processIn: 60_000 })
    await client.enqueue("c", 3, { queue: "other" })
    await client.close()
    await run(pauseQueue("other"))
    const text = await run(queueMetricsText())
    expect(text).toContain('asynq_queue_size{queue="default"} 2\n')
    expect(text).toContain('asynq_tasks_enqueued_total{queue="default",state="pending"} 1\n')
    expect(text).toContain('asynq_tasks_enqueued_total{queue="default",state="scheduled"} 1\n')
    expect(text).toContain('asynq_queue_paused_total{queue="other"} 1\n')
    expect(text).toContain('asynq_queue_paused_total{queue="default"} 0\n')
    expect(text).toMatch(/asynq_queue_memory_usage_approx_bytes\{queue="default"\} [1-9]\d*\n/)
  })
})
