/**
 * The worker's metrics (Effect Metric): attempts by queue, type and outcome, attempt duration,
 * tasks in flight, lease extensions, lost leases and fetch batch sizes. They live in the
 * MetricRegistry of the context the Server (or drain) started in, so `PrometheusMetrics.format`
 * (the `/metrics` endpoint) and `OtlpMetrics` read them from there.
 */
import type * as Context from "effect/Context"
import * as Metric from "effect/Metric"

/** `asynq_worker_attempts_total`: finished attempts by queue, type and outcome. */
export const attemptsTotal = Metric.counter("asynq_worker_attempts_total", {
  description:
    "Task attempts finished, by queue, task type and outcome (completed, retried, archived, revoked, requeued, skipped, rate-limited, lease-lost, gave-up, interrupted)",
  incremental: true
})

/** `asynq_worker_attempt_duration_seconds`: from an attempt's start to its outcome written. */
export const attemptDurationSeconds = Metric.histogram("asynq_worker_attempt_duration_seconds", {
  description: "Time from an attempt's start to its outcome written, in seconds, by queue and task type",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800]
})

/** `asynq_worker_tasks_in_flight`: tasks running now, by queue. */
export const tasksInFlight = Metric.gauge("asynq_worker_tasks_in_flight", {
  description: "Tasks running now, by queue (every worker sharing the registry: usually the process)"
})

/** `asynq_worker_lease_extensions_total`: leases the heartbeat extended, by queue. */
export const leaseExtensionsTotal = Metric.counter("asynq_worker_lease_extensions_total", {
  description: "Task leases extended by the heartbeat, by queue",
  incremental: true
})

/** `asynq_worker_leases_lost_total`: attempts whose lease was lost (the task was recovered elsewhere), by queue. */
export const leasesLostTotal = Metric.counter("asynq_worker_leases_lost_total", {
  description: "Attempts that lost their task's lease (recovered by another worker, or deleted), by queue",
  incremental: true
})

/** `asynq_worker_fetch_batch_size`: tasks leased per fetch round trip (0 when the queues were empty). */
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

/** A queue's labelled series, made on its first use. */
interface QueueSeries {
  readonly inFlightGauge: Metric.Metric<number, unknown>
  readonly leaseExtensions: Metric.Metric<number, unknown>
  readonly leasesLost: Metric.Metric<number, unknown>
  readonly byType: Map<string, TypeSeries>
}

/** A (queue, type)'s labelled series. */
interface TypeSeries {
  readonly duration: Metric.Metric<number, unknown>
  readonly byOutcome: Map<string, Metric.Metric<number, unknown>>
}

export const makeWorkerMetricsRecorder = (
  context: Context.Context<never>,
  queues: ReadonlyArray<string>
): WorkerMetricsRecorder => {
  const byQueue = new Map<string, QueueSeries>()
  const queueSeries = (queue: string): QueueSeries => {
    let q = byQueue.get(queue)
    if (q === undefined) {
      q = {
        inFlightGauge: Metric.withAttributes(tasksInFlight, { queue }),
        leaseExtensions: Metric.withAttributes(leaseExtensionsTotal, { queue }),
        leasesLost: Metric.withAttributes(leasesLostTotal, { queue }),
        byType: new Map()
      }
      byQueue.set(queue, q)
    }
    return q
  }
  const typeSeries = (q: QueueSeries, queue: string, type: string): TypeSeries => {
    let t = q.byType.get(type)
    if (t === undefined) {
      t = { duration: Metric.withAttributes(attemptDurationSeconds, { queue, type }), byOutcome: new Map() }
      q.byType.set(type, t)
    }
    return t
  }
  // The gauge moves by deltas, so servers (or drains) sharing one registry add up.
  const setInFlight = (q: QueueSeries, delta: number) => q.inFlightGauge.modifyUnsafe(delta, context)
  // The served queues show up at once (0 in flight), before their first task.
  for (const queue of queues) setInFlight(queueSeries(queue), 0)
  return {
    attemptStarted: (queue) => setInFlight(queueSeries(queue), 1),
    attemptEnded: (queue, type, outcome, seconds) => {
      const q = queueSeries(queue)
      setInFlight(q, -1)
      const t = typeSeries(q, queue, type)
      let attempts = t.byOutcome.get(outcome)
      if (attempts === undefined) {
        attempts = Metric.withAttributes(attemptsTotal, { queue, type, outcome })
        t.byOutcome.set(outcome, attempts)
      }
      attempts.updateUnsafe(1, context)
      t.duration.updateUnsafe(seconds, context)
      if (outcome === "lease-lost") q.leasesLost.updateUnsafe(1, context)
    },
    fetched: (count) => fetchBatchSize.updateUnsafe(count, context),
    leasesExtended: (queue, count) => queueSeries(queue).leaseExtensions.updateUnsafe(count, context)
  }
}
