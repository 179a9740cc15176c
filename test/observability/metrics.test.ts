/**
 * Worker metrics at /metrics, on real Redis: an in-process Server with `metrics: { port: 0 }`, and
 * a real `effect-asynq worker --metrics-port` process. Counts are asserted exactly.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer, Metric, References } from "effect"
import type { Redis as IORedis } from "ioredis"
import * as Server from "../../src/processor/Server.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { testBrokerLayer } from "../support/arrange.js"
import { asynqMsg, putPending } from "../support/asynqLayout.js"
import { cliBundle, repoRoot } from "../support/cliBundle.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { attributeValue, startOtlpReceiver } from "../support/otlpReceiver.js"

let c: IORedis
let dir: string

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(repoRoot, ".tmp", "metrics-"))
})
afterAll(() => {
  c.disconnect()
  rmSync(dir, { recursive: true, force: true })
})

const quiet = <A, E, R>(eff: Effect.Effect<A, E, R>) =>
  process.env.DEBUG_TESTS ? eff : eff.pipe(Effect.provideService(References.MinimumLogLevel, "Error"))

const scrape = async (url: string) => {
  const res = await fetch(url)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return res.text()
}

/** The value of one series line (`name{labels} value`), or undefined when the series is not there. */
const seriesValue = (text: string, series: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(series + " "))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe("worker metrics at /metrics", () => {
  it("an in-process Server with metrics: { port: 0 } serves attempts by queue/type/outcome, durations, in-flight, lease extensions and losses, fetch sizes, plus extra text", async () => {
    const settled: Array<string> = []
    let holdStarted = false
    const ids = await Effect.runPromise(
      quiet(
        Effect.gen(function* () {
          for (let i = 0; i < 3; i++) yield* enqueue("m:ok", { i }, { queue: "mq" })
          yield* enqueue("m:fail", undefined, { queue: "mq", maxRetry: 0 })
          yield* enqueue("m:retry", undefined, { queue: "mq", maxRetry: 5 })
          const hold = yield* enqueue("m:hold", undefined, { queue: "mq" })
          const handle = yield* Server.start(
            {
              "m:ok": () => Effect.void,
              "m:fail": () => Effect.fail(new Error("no")),
              "m:retry": () => Effect.fail(new Error("later")),
              "m:hold": () => Effect.sync(() => void (holdStarted = true)).pipe(Effect.andThen(Effect.never))
            },
            {
              queues: { mq: 2, other: 1 },
              concurrency: 10,
              // A lease long enough that a loaded machine's heartbeat never lets it run out by itself.
              leaseMs: 10_000,
              heartbeatIntervalMs: 50,
              onSettled: (_m, o) => settled.push(o),
              metrics: { port: 0, extra: Effect.succeed('asynq_queue_size{queue="mq"} 0') }
            }
          )
          const url = handle.metricsUrl!
          expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
          yield* Effect.promise(() =>
            waitFor("five outcomes and the held task started", () => settled.length === 5 && holdStarted)
          )
          // The held task is running: in flight 1, and the heartbeat extends its lease.
          const extended = (t: string) => seriesValue(t, 'asynq_worker_lease_extensions_total{queue="mq"}') ?? 0
          const before = extended(yield* Effect.promise(() => scrape(url)))
          const during = yield* Effect.promise(() =>
            waitFor(
              "a lease extension of the held task",
              () => scrape(url),
              (t) => extended(t) > before
            )
          )
          expect(seriesValue(during, 'asynq_worker_tasks_in_flight{queue="mq"}')).toBe(1)
          expect(seriesValue(during, 'asynq_worker_tasks_in_flight{queue="other"}')).toBe(0)
          // Someone else takes the held task's lease (as a recoverer would): the next heartbeat finds it lost.
          yield* Effect.promise(() => c.zrem("asynq:{mq}:lease", hold.id))
          yield* Effect.promise(() =>
            waitFor(
              "the lost lease's outcome",
              () => settled.length,
              (n) => n === 6
            )
          )
          const text = yield* Effect.promise(() => scrape(url))
          yield* handle.shutdown
          return { text, hold: hold.id }
        }).pipe(
          Effect.scoped,
          Effect.provide(testBrokerLayer()),
          Effect.provideService(Metric.MetricRegistry, new Map())
        )
      ) as Effect.Effect<{ text: string; hold: string }, unknown>
    )
    const t = ids.text
    expect(settled.sort()).toEqual(["archived", "completed", "completed", "completed", "lease-lost", "retried"])
    expect(seriesValue(t, 'asynq_worker_attempts_total{queue="mq",type="m:ok",outcome="completed"}')).toBe(3)
    expect(seriesValue(t, 'asynq_worker_attempts_total{queue="mq",type="m:fail",outcome="archived"}')).toBe(1)
    expect(seriesValue(t, 'asynq_worker_attempts_total{queue="mq",type="m:retry",outcome="retried"}')).toBe(1)
    expect(seriesValue(t, 'asynq_worker_attempts_total{queue="mq",type="m:hold",outcome="lease-lost"}')).toBe(1)
    expect(t.split("\n").filter((l) => l.startsWith("asynq_worker_attempts_total{"))).toHaveLength(4)
    expect(seriesValue(t, 'asynq_worker_attempt_duration_seconds_count{queue="mq",type="m:ok"}')).toBe(3)
    expect(seriesValue(t, 'asynq_worker_attempt_duration_seconds_bucket{queue="mq",type="m:ok",le="+Inf"}')).toBe(3)
    expect(seriesValue(t, 'asynq_worker_attempt_duration_seconds_count{queue="mq",type="m:hold"}')).toBe(1)
    expect(seriesValue(t, 'asynq_worker_tasks_in_flight{queue="mq"}')).toBe(0)
    expect(seriesValue(t, 'asynq_worker_leases_lost_total{queue="mq"}')).toBe(1)
    expect(seriesValue(t, 'asynq_worker_lease_extensions_total{queue="mq"}')).toBeGreaterThanOrEqual(1)
    // Every leased task was counted in exactly one fetch.
    expect(seriesValue(t, "asynq_worker_fetch_batch_size_sum")).toBe(6)
    expect(t).toContain("# TYPE asynq_worker_attempts_total counter")
    expect(t).toContain("# TYPE asynq_worker_attempt_duration_seconds histogram")
    expect(t).toContain("# TYPE asynq_worker_tasks_in_flight gauge")
    // The extra producer's text is appended.
    expect(t.endsWith('asynq_queue_size{queue="mq"} 0\n')).toBe(true)
  })

  it("two Servers sharing one registry: the in-flight gauge counts the tasks of both", async () => {
    const started: Array<string> = []
    const text = await Effect.runPromise(
      quiet(
        Effect.gen(function* () {
          yield* enqueue("h:hold", undefined, { queue: "hq" })
          yield* enqueue("h:hold", undefined, { queue: "hq" })
          const hold = () => Effect.sync(() => void started.push("x")).pipe(Effect.andThen(Effect.never))
          const options = { queues: { hq: 1 }, concurrency: 1, shutdownTimeoutMs: 0, metrics: true }
          const a = yield* Server.start({ "h:hold": hold }, { ...options, metrics: { port: 0 } })
          const b = yield* Server.start({ "h:hold": hold }, options)
          yield* Effect.promise(() =>
            waitFor(
              "both tasks running",
              () => started.length,
              (n) => n === 2
            )
          )
          const text = yield* Effect.promise(() => scrape(a.metricsUrl!))
          yield* b.shutdown
          yield* a.shutdown
          return text
        }).pipe(
          Effect.scoped,
          Effect.provide(testBrokerLayer()),
          Effect.provideService(Metric.MetricRegistry, new Map())
        )
      ) as Effect.Effect<string, unknown>
    )
    expect(seriesValue(text, 'asynq_worker_tasks_in_flight{queue="hq"}')).toBe(2)
  })

  it("a Server without the metrics option records nothing", async () => {
    const registry = new Map()
    const settled: Array<string> = []
    await Effect.runPromise(
      quiet(
        Effect.gen(function* () {
          yield* enqueue("n:ok", undefined, { queue: "nq" })
          const handle = yield* Server.start(
            { "n:ok": () => Effect.void },
            { queues: { nq: 1 }, onSettled: (_m, o) => settled.push(o) }
          )
          yield* Effect.promise(() =>
            waitFor(
              "the outcome",
              () => settled.length,
              (n) => n === 1
            )
          )
          expect(handle.metricsUrl).toBeUndefined()
          yield* handle.shutdown
        }).pipe(
          Effect.scoped,
          Effect.provide(testBrokerLayer()),
          Effect.provideService(Metric.MetricRegistry, registry)
        )
      ) as Effect.Effect<void, unknown>
    )
    expect(settled).toEqual(["completed"])
    expect(registry.size).toBe(0)
  })

  it("a metrics port that is taken: Server.start fails with InvalidArgument naming metrics.port", async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r))
    const port = (blocker.address() as { port: number }).port
    try {
      const error = await Effect.runPromise(
        quiet(
          Server.start({}, { queues: { xq: 1 }, metrics: { port } }).pipe(
            Effect.scoped,
            Effect.flip,
            Effect.provide(testBrokerLayer())
          )
        ) as Effect.Effect<unknown, unknown>
      )
      expect(error).toMatchObject({ _tag: "InvalidArgument", field: "metrics.port" })
      expect((error as Error).message).toContain(`cannot serve metrics on 127.0.0.1:${port}`)
    } finally {
      blocker.close()
    }
  })
})

const freePort = async () => {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r))
  const port = (s.address() as { port: number }).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

describe("effect-asynq worker --metrics-port", { timeout: 120_000 }, () => {
  it("a worker process serves its metrics at /metrics with exact counts after processing tasks, and (--otlp-endpoint) sends its attempt spans at shutdown", async () => {
    const receiver = await startOtlpReceiver()
    writeFileSync(
      join(dir, "handlers.mjs"),
      `export const handlers = { "w:ok": async () => {}, "w:bad": async () => { throw new Error("bad") } }
export const options = { shutdownTimeoutMs: 2000 }
`
    )
    const port = await freePort()
    const child = spawn(
      process.execPath,
      [
        await cliBundle(),
        "worker",
        join(dir, "handlers.mjs"),
        "--queues",
        "wq=1",
        "--concurrency",
        "2",
        "--metrics-port",
        String(port),
        "--otlp-endpoint",
        receiver.url
      ],
      {
        cwd: repoRoot,
        env: { ...process.env, REDIS_URL: testRedisUrl() },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let logs = ""
    child.stdout.on("data", (d) => (logs += d))
    child.stderr.on("data", (d) => (logs += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      const url = `http://127.0.0.1:${port}/metrics`
      await waitFor(
        "the metrics endpoint",
        () => scrape(url),
        (t) => t.includes('asynq_worker_tasks_in_flight{queue="wq"} 0'),
        { timeoutMs: 60_000 }
      )
      for (const id of ["a1", "a2", "a3"]) await putPending(c, asynqMsg("wq", id, { type: "w:ok" }), Date.now())
      await putPending(c, asynqMsg("wq", "b1", { type: "w:bad", retry: 0 }), Date.now())
      const text = await waitFor(
        "four attempts at /metrics",
        () => scrape(url),
        (t) =>
          seriesValue(t, 'asynq_worker_attempts_total{queue="wq",type="w:ok",outcome="completed"}') === 3 &&
          seriesValue(t, 'asynq_worker_attempts_total{queue="wq",type="w:bad",outcome="archived"}') === 1,
        { timeoutMs: 60_000 }
      )
      expect(text.split("\n").filter((l) => l.startsWith("asynq_worker_attempts_total{"))).toHaveLength(2)
      expect(seriesValue(text, 'asynq_worker_attempt_duration_seconds_count{queue="wq",type="w:ok"}')).toBe(3)
      expect(seriesValue(text, 'asynq_worker_tasks_in_flight{queue="wq"}')).toBe(0)
      expect(seriesValue(text, "asynq_worker_fetch_batch_size_sum")).toBe(4)
      // After the worker metrics, asynq's queue metrics read from Redis at the scrape.
      expect(seriesValue(text, 'asynq_tasks_processed_total{queue="wq"}')).toBe(4)
      expect(seriesValue(text, 'asynq_tasks_failed_total{queue="wq"}')).toBe(1)
      expect(seriesValue(text, 'asynq_tasks_enqueued_total{queue="wq",state="archived"}')).toBe(1)
      expect(logs).toContain(`metrics at http://127.0.0.1:${port}/metrics`)
      const other = await fetch(`http://127.0.0.1:${port}/other`)
      expect(other.status).toBe(404)
    } finally {
      child.kill("SIGTERM")
    }
    try {
      expect(await exited).toBe(0)
      // Buffered spans are sent when the worker shuts down (the export interval has not come).
      const spans = receiver.spans().filter((s) => s.name === "process wq")
      expect(spans.map((s) => attributeValue(s.attributes, "messaging.message.id")).sort()).toEqual([
        "a1",
        "a2",
        "a3",
        "b1"
      ])
      expect(spans.filter((s) => s.status.code === 2).map((s) => s.status.message)).toEqual(["bad"])
      expect(receiver.metricNames()).toContain("asynq_worker_attempts_total")
    } finally {
      await receiver.close()
    }
  })
})
