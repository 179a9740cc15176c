/**
 * The worker's metrics (Effect Metric): attempts by queue, type and outcome, attempt duration,
 * tasks in flight, lease extensions, lost leases and fetch batch sizes. They live in the
 * MetricRegistry of the context the Server (or drain) started in, so `PrometheusMetrics.format`
 * (the `/metrics` endpoint) and `OtlpMetrics` read them from there.
 */
import type * as Context from "effect/Context"
import * as Metric from "effect/Metric"

export const attemptsTotal = Metric.counter("asynq_worker_attempts_total", {
  description: "Task attempts finished, by queue, task type and outcome (completed, retried, archived, revoked, requeued, skipped, lease-lost, gave-up)",
  incremental: true
})

export const attemptDurationSeconds = Metric.histogram("asynq_worker_attempt_duration_seconds", {
  description: "Time from an attempt's start to its outcome written, in seconds, by queue and task type",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800]
})

export const tasksInFlight = Metric.gauge("asynq_worker_tasks_in_flight", {
  description: "Tasks this worker is running now, by queue"
})

export const leaseExtensionsTotal = Metric.counter("asynq_worker_lease_extensions_total", {
  description: "Task leases extended by the heartbeat, by queue",
  incremental: true
})

export const leasesLostTotal = Metric.counter("asynq_worker_leases_lost_total", {
  description: "Attempts that lost their task's lease (recovered by another worker, or deleted), by queue",
  incremental: true
})

export const fetchBatchSize = Metric.histogram("asynq_worker_fetch_batch_size", {
  description: "Tasks leased per fetch round trip (0: the queues were empty)",
  boundaries: [0, 1, 2, 5, 10, 20, 50, 100]
})

/** Every worker metric's name, as the Prometheus text shows it. */
export const workerMetricNames = [
  "asynq_worker_attempts_total",
  "asynq_worker_attempt_duration_seconds",
  "asynq_worker_tasks_in_flight",
  "asynq_worker_lease_extensions_total",
  "asynq_worker_leases_lost_total",
  "asynq_worker_fetch_batch_size"
] as const

/** Records the worker metrics into one context's registry; each labelled series is made once and reused. */
export interface WorkerMetricsRecorder {
  readonly attemptStarted: (queue: string) => void
  readonly attemptEnded: (queue: string, type: string, outcome: string, seconds: number) => void
  readonly fetched: (count: number) => void
  readonly leasesExtended: (queue: string, count: number) => void
}

export const makeWorkerMetricsRecorder = (context: Context.Context<never>, queues: ReadonlyArray<string>): WorkerMetricsRecorder => {
  const series = new Map<string, Metric.Metric<number, unknown>>()
  const labelled = <S>(metric: Metric.Metric<number, S>, attributes: Record<string, string>): Metric.Metric<number, S> => {
    let key = metric.id
    for (const k in attributes) key += `\u0000${attributes[k]}`
    let m = series.get(key) as Metric.Metric<number, S> | undefined
    if (m === undefined) {
      m = Metric.withAttributes(metric, attributes)
      series.set(key, m as Metric.Metric<number, unknown>)
    }
    return m
  }
  const inFlight = new Map<string, number>()
  const setInFlight = (queue: string, delta: number) => {
    const n = (inFlight.get(queue) ?? 0) + delta
    inFlight.set(queue, n)
    labelled(tasksInFlight, { queue }).updateUnsafe(n, context)
  }
  // The served queues show up at once (0 in flight), before their first task.
  for (const queue of queues) setInFlight(queue, 0)
  return {
    attemptStarted: (queue) => setInFlight(queue, 1),
    attemptEnded: (queue, type, outcome, seconds) => {
      setInFlight(queue, -1)
      labelled(attemptsTotal, { queue, type, outcome }).updateUnsafe(1, context)
      labelled(attemptDurationSeconds, { queue, type }).updateUnsafe(seconds, context)
      if (outcome === "lease-lost") labelled(leasesLostTotal, { queue }).updateUnsafe(1, context)
    },
    fetched: (count) => fetchBatchSize.updateUnsafe(count, context),
    leasesExtended: (queue, count) => labelled(leaseExtensionsTotal, { queue }).updateUnsafe(count, context)
  }
}
