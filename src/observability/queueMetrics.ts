/**
 * Queue metrics as asynq's `x/metrics` QueueMetricsCollector (and asynqmon's exporter) publish
 * them: the same names, labels, types and HELP texts, so existing asynq Grafana boards work
 * unchanged. Read from Redis at scrape time through the inspector (one GetQueueInfo per queue) and
 * rendered in the Prometheus text exposition format (version 0.0.4).
 */
import * as Effect from "effect/Effect"
import { getQueueInfo } from "../inspector/queueInfo.js"
import { queues } from "../inspector/queues.js"
import type { QueueInfo } from "../inspector/types.js"

/** The content type of the text `queueMetricsText` returns. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

type MetricType = "gauge" | "counter"

/** One metric family of the collector: name, HELP, TYPE, and how a queue's info gives its samples. */
interface QueueMetricFamily {
  readonly name: string
  readonly help: string
  readonly type: MetricType
  readonly samples: (
    info: QueueInfo
  ) => ReadonlyArray<{ readonly labels: ReadonlyArray<readonly [string, string]>; readonly value: number }>
}

const perQueue = (value: (info: QueueInfo) => number) => (info: QueueInfo) => [
  { labels: [["queue", info.queue]] as const, value: value(info) }
]

/** The states asynq's collector reports in asynq_tasks_enqueued_total (aggregating is not among them). */
const enqueuedStates = ["active", "pending", "scheduled", "retry", "archived", "completed"] as const

/** asynq's seven queue metric families, in the order of its collector. */
export const queueMetricFamilies: ReadonlyArray<QueueMetricFamily> = [
  {
    name: "asynq_tasks_enqueued_total",
    help: "Number of tasks enqueued; broken down by queue and state.",
    type: "gauge",
    samples: (info) =>
      enqueuedStates.map((state) => ({
        labels: [
          ["queue", info.queue],
          ["state", state]
        ] as const,
        value: info[state]
      }))
  },
  { name: "asynq_queue_size", help: "Number of tasks in a queue", type: "gauge", samples: perQueue((i) => i.size) },
  {
    name: "asynq_queue_latency_seconds",
    help: "Number of seconds the oldest pending task is waiting in pending state to be processed.",
    type: "gauge",
    samples: perQueue((i) => i.latencyMs / 1000)
  },
  {
    name: "asynq_queue_memory_usage_approx_bytes",
    help: "Number of memory used by a given queue (approximated number by sampling).",
    type: "gauge",
    samples: perQueue((i) => i.memoryUsage)
  },
  {
    name: "asynq_tasks_processed_total",
    help: "Number of tasks processed (both succeeded and failed); broken down by queue",
    type: "counter",
    samples: perQueue((i) => i.processedTotal)
  },
  {
    name: "asynq_tasks_failed_total",
    help: "Number of tasks failed; broken down by queue",
    type: "counter",
    samples: perQueue((i) => i.failedTotal)
  },
  {
    name: "asynq_queue_paused_total",
    help: "Number of queues paused",
    type: "gauge",
    samples: perQueue((i) => (i.paused ? 1 : 0))
  }
]

/** Only the queues that have this part of a flow-control limit get a sample. */
const perLimitedQueue = (value: (info: QueueInfo) => number | undefined) => (info: QueueInfo) => {
  const v = value(info)
  return v === undefined ? [] : [{ labels: [["queue", info.queue]] as const, value: v }]
}

/**
 * effect-asynq's flow-control limits (not asynq's): written only for the queues that have one (a
 * family with no sample is left out, so a deployment without limits scrapes asynq's seven only).
 */
export const queueLimitFamilies: ReadonlyArray<QueueMetricFamily> = [
  {
    name: "effect_asynq_queue_rate_limit_per_second",
    help: "Tasks per second the queue's rate limit lets start, across all effect-asynq workers.",
    type: "gauge",
    samples: perLimitedQueue((i) => (i.limit?.rate ? (i.limit.rate.limit * 1000) / i.limit.rate.perMs : undefined))
  },
  {
    name: "effect_asynq_queue_rate_limit_burst",
    help: "Tasks the queue's rate limit lets start at once after a quiet spell.",
    type: "gauge",
    samples: perLimitedQueue((i) => i.limit?.rate?.burst)
  },
  {
    name: "effect_asynq_queue_concurrency_limit",
    help: "Most tasks of the queue active at once, across all effect-asynq workers.",
    type: "gauge",
    samples: perLimitedQueue((i) => i.limit?.concurrency)
  },
  {
    name: "effect_asynq_queue_key_rate_limit_per_second",
    help: "Tasks per second the queue's per-key rate lets start for each limit key, across all effect-asynq workers.",
    type: "gauge",
    samples: perLimitedQueue((i) =>
      i.limit?.perKey?.rate ? (i.limit.perKey.rate.limit * 1000) / i.limit.perKey.rate.perMs : undefined
    )
  },
  {
    name: "effect_asynq_queue_key_rate_limit_burst",
    help: "Tasks of one limit key the queue's per-key rate lets start at once after a quiet spell.",
    type: "gauge",
    samples: perLimitedQueue((i) => i.limit?.perKey?.rate?.burst)
  },
  {
    name: "effect_asynq_queue_key_concurrency_limit",
    help: "Most tasks of one limit key active at once, across all effect-asynq workers.",
    type: "gauge",
    samples: perLimitedQueue((i) => i.limit?.perKey?.concurrency)
  }
]

const escapeHelp = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")
const escapeLabel = (s: string) => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
const formatValue = (v: number) =>
  Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v)

/**
 * The Prometheus text of the queue metrics for these queues. Like Go's registry: families sorted
 * by name, each with its HELP and TYPE, samples sorted by label values; no family without samples.
 */
export const renderQueueMetrics = (infos: ReadonlyArray<QueueInfo>): string => {
  if (infos.length === 0) return ""
  const lines: Array<string> = []
  const families = [...queueMetricFamilies, ...queueLimitFamilies].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  )
  for (const family of families) {
    const raw = infos.flatMap(family.samples)
    if (raw.length === 0) continue
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`)
    const samples = raw.map((s) => ({
      key: s.labels.map(([, v]) => v).join("\u0000"),
      text: `${family.name}{${s.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}} ${formatValue(s.value)}`
    }))
    samples.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    for (const s of samples) lines.push(s.text)
  }
  return lines.join("\n") + "\n"
}

/** Every queue's info, read now (a queue deleted between the listing and its read is left out). */
export const collectQueueInfos = Effect.fn("QueueMetrics.collect")(function* () {
  const names = yield* queues()
  const infos = yield* Effect.forEach(
    names,
    (q) => getQueueInfo(q).pipe(Effect.catchTag("QueueNotFound", () => Effect.succeed(undefined))),
    { concurrency: 4 }
  )
  return infos.filter((i): i is QueueInfo => i !== undefined)
})

/**
 * The queue metrics of every queue as Prometheus text, read from Redis now (scrape time). Fails
 * with the RedisError when Redis does not answer, so a scrape reports the target down instead of
 * stale numbers.
 */
export const queueMetricsText = Effect.fn("QueueMetrics.text")(function* () {
  return renderQueueMetrics(yield* collectQueueInfos())
})
