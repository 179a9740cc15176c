/**
 * The measured scenarios, the same code for every library (driven through LibAdapter).
 * Each one starts from an empty Redis with zeroed statistics, runs a bounded number of tasks,
 * and returns plain numbers. Nothing here loops without a bound or a timeout.
 */
import type { Redis } from "ioredis"
import {
  measuredWindow,
  nodeCpu,
  nodeCpuDeltaUs,
  nowMs,
  percentile,
  redisDelta,
  redisSnapshot,
  resetRedis,
  sleep,
  type RedisDelta
} from "./measure.js"
import { flowSteps, flowValue, type LibAdapter, NotAvailable, type Payload } from "./libs/types.js"

export const bulkBatch = 1_000
export const concurrentCallers = 50

export interface CostPerTask {
  /** Node CPU (user + system) of the benchmark process, µs per task */
  readonly nodeCpuUs: number
  /** Redis CPU (used_cpu_user + used_cpu_sys), µs per task */
  readonly redisCpuUs: number
  /** Redis commands (commandstats, including those run inside Lua scripts) per task */
  readonly redisCalls: number
  readonly byCommand: Record<string, number>
}

export interface RateResult extends CostPerTask {
  readonly tasks: number
  readonly seconds: number
  readonly perSecond: number
  /** Payload-size processing: characters of body the handler read per task (the payload's size when all went well). */
  readonly bodyBytesRead?: number
}

export interface BulkResult extends RateResult {
  readonly bytesPerTask: number
  readonly keysPerTask: number
}

export interface LatencyResult {
  readonly tasks: number
  readonly targetPerSecond: number
  readonly achievedPerSecond: number
  readonly concurrency: number
  readonly p50Ms: number
  readonly p95Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly meanMs: number
}

/**
 * The body of the payload-size scenarios: `bytes` ASCII characters (so as many bytes in UTF-8 and in
 * JSON, which escapes none of them), varied by the task's number so no two tasks carry the same bytes.
 */
export const payloadBody = (bytes: number, n: number): string => {
  const head = `${n}:`
  return bytes <= head.length
    ? head.slice(0, bytes)
    : head + "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(bytes / 36)).slice(0, bytes - head.length)
}

/** `n` payloads numbered from `from`; with `bytes` > 0 each carries a body of that many bytes (`s`). */
const payloads = (n: number, from = 0, bytes = 0): Payload[] =>
  Array.from({ length: n }, (_, i) =>
    bytes > 0 ? { n: from + i, t: 0, s: payloadBody(bytes, from + i) } : { n: from + i, t: 0 }
  )

/**
 * What the handler of the payload-size scenarios does with a payload: reads every field (as a real
 * handler would); returns how many characters of body it read.
 */
const readPayload = (p: Payload): number => {
  const s = p.s
  // Its last character too (a body holds no NUL: a payload cut short or garbled reads as 0 bytes).
  return s === undefined || s.length === 0 || s.charCodeAt(s.length - 1) === 0 ? 0 : s.length
}

const cost = (tasks: number, nodeUs: number, delta: RedisDelta): CostPerTask => {
  const byCommand: Record<string, number> = {}
  for (const [k, v] of Object.entries(delta.byCommand).sort((a, b) => b[1] - a[1])) byCommand[k] = round(v / tasks, 3)
  return {
    nodeCpuUs: round(nodeUs / tasks, 2),
    redisCpuUs: round(delta.cpuUs / tasks, 2),
    redisCalls: round(delta.calls / tasks, 3),
    byCommand
  }
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits

const fill = async (lib: LibAdapter, n: number, bytes = 0): Promise<void> => {
  for (let i = 0; i < n; i += bulkBatch) await lib.enqueueBulk(payloads(Math.min(bulkBatch, n - i), i, bytes))
}

/** Runs `f` under measurement: wall time, Node CPU and Redis deltas between the two points. */
const measured = async (admin: Redis, tasks: number, f: () => Promise<void>): Promise<RateResult> => {
  const before = await redisSnapshot(admin)
  await measuredWindow.begin()
  const cpu0 = nodeCpu()
  const t0 = nowMs()
  await f()
  const seconds = (nowMs() - t0) / 1000
  const nodeUs = nodeCpuDeltaUs(cpu0)
  await measuredWindow.end()
  const after = await redisSnapshot(admin)
  return {
    tasks,
    seconds: round(seconds, 4),
    perSecond: Math.round(tasks / seconds),
    ...cost(tasks, nodeUs, redisDelta(before, after))
  }
}

/** One task per call, each call awaited before the next (latency-bound, as a single caller sees it). */
export const enqueueSerial = async (lib: LibAdapter, admin: Redis, n: number, bytes = 0): Promise<RateResult> => {
  await resetRedis(admin)
  const ps = payloads(n, 0, bytes)
  return measured(admin, n, async () => {
    for (const p of ps) await lib.enqueueOne(p)
  })
}

/** One task per call, `concurrentCallers` calls in flight (many request handlers enqueueing at once). */
export const enqueueConcurrent = async (lib: LibAdapter, admin: Redis, n: number): Promise<RateResult> => {
  await resetRedis(admin)
  const ps = payloads(n)
  return measured(admin, n, async () => {
    let next = 0
    const caller = async () => {
      while (next < ps.length) await lib.enqueueOne(ps[next++]!)
    }
    await Promise.all(Array.from({ length: concurrentCallers }, caller))
  })
}

/** Bulk API in batches of `bulkBatch`, awaited in turn; then Redis bytes and keys per pending task. */
export const enqueueBulk = async (lib: LibAdapter, admin: Redis, n: number, bytes = 0): Promise<BulkResult> => {
  await resetRedis(admin)
  await sleep(50)
  const mem0 = await redisSnapshot(admin)
  const batches = Array.from({ length: Math.ceil(n / bulkBatch) }, (_, b) =>
    payloads(Math.min(bulkBatch, n - b * bulkBatch), b * bulkBatch, bytes)
  )
  const rate = await measured(admin, n, async () => {
    for (const batch of batches) await lib.enqueueBulk(batch)
  })
  await sleep(200) // let client buffers drain before reading used_memory
  const mem1 = await redisSnapshot(admin)
  const keys = await admin.dbsize()
  return { ...rate, bytesPerTask: Math.round((mem1.usedMemory - mem0.usedMemory) / n), keysPerTask: round(keys / n, 3) }
}

/**
 * `n` pre-filled tasks, no-op handler, from worker start to the n-th handler call; cost includes the stop.
 * With `bytes` > 0 each task carries a body of that size and the handler reads it.
 */
export const processThroughput = async (
  lib: LibAdapter,
  admin: Redis,
  n: number,
  concurrency: number,
  timeoutMs: number,
  bytes = 0
): Promise<RateResult> => {
  await resetRedis(admin)
  await fill(lib, n, bytes)
  await sleep(100)
  const before = await redisSnapshot(admin)
  await measuredWindow.begin()
  const cpu0 = nodeCpu()
  let seen = 0
  let lastAt = 0
  let resolveAll!: () => void
  const all = new Promise<void>((r) => (resolveAll = r))
  const t0 = nowMs()
  let bodyRead = 0
  const worker = await lib.startWorker(concurrency, (p) => {
    if (bytes > 0) bodyRead += readPayload(p)
    if (++seen === n) {
      lastAt = nowMs()
      resolveAll()
    }
  })
  const timer = setTimeout(() => resolveAll(), timeoutMs)
  await all
  clearTimeout(timer)
  await worker.stop()
  const nodeUs = nodeCpuDeltaUs(cpu0)
  await measuredWindow.end()
  const after = await redisSnapshot(admin)
  if (seen < n)
    throw new Error(`${lib.name}: processed ${seen} of ${n} tasks within ${timeoutMs} ms (concurrency ${concurrency})`)
  const seconds = (lastAt - t0) / 1000
  const result = {
    tasks: n,
    seconds: round(seconds, 4),
    perSecond: Math.round(n / seconds),
    ...cost(n, nodeUs, redisDelta(before, after))
  }
  // The payload-size scenarios also say how much body the handler read per task (the whole payload, or the run is wrong).
  return bytes > 0 ? { ...result, bodyBytesRead: round(bodyRead / n, 1) } : result
}

/**
 * Processing by one long-running worker: `warmup + n` tasks pre-filled, one worker started, the first
 * `warmup` handler calls discarded (V8 has optimized the worker's code by then), the next `n`
 * measured — from the warmup-th call to the last. The default scenarios start a fresh worker in the
 * measured window instead (after a warm-up run by another worker in the same process); this shows a
 * worker that has been running for a while. Redis figures from snapshots taken at the two points.
 */
export const processSteady = async (
  lib: LibAdapter,
  admin: Redis,
  n: number,
  concurrency: number,
  timeoutMs: number,
  warmup: number
): Promise<RateResult> => {
  await resetRedis(admin)
  await fill(lib, warmup + n)
  await sleep(100)
  let seen = 0
  let t0 = 0
  let cpu0 = nodeCpu()
  let lastAt = 0
  let nodeUs = 0
  let before: Promise<Awaited<ReturnType<typeof redisSnapshot>>> | undefined
  let after: Promise<Awaited<ReturnType<typeof redisSnapshot>>> | undefined
  let resolveAll!: () => void
  const all = new Promise<void>((r) => (resolveAll = r))
  const open = () => {
    t0 = nowMs()
    cpu0 = nodeCpu()
    before = redisSnapshot(admin)
    void measuredWindow.begin()
  }
  if (warmup === 0) open()
  const worker = await lib.startWorker(concurrency, () => {
    seen++
    if (seen === warmup) open()
    else if (seen === warmup + n) {
      lastAt = nowMs()
      nodeUs = nodeCpuDeltaUs(cpu0)
      after = redisSnapshot(admin)
      resolveAll()
    }
  })
  const timer = setTimeout(() => resolveAll(), timeoutMs)
  await all
  clearTimeout(timer)
  await measuredWindow.end()
  await worker.stop()
  if (seen < warmup + n)
    throw new Error(
      `${lib.name}: processed ${seen} of ${warmup + n} tasks within ${timeoutMs} ms (concurrency ${concurrency})`
    )
  const seconds = (lastAt - t0) / 1000
  return {
    tasks: n,
    seconds: round(seconds, 4),
    perSecond: Math.round(n / seconds),
    ...cost(n, nodeUs, redisDelta(await before!, await after!))
  }
}

/**
 * Enqueue→handler latency: a running worker (`concurrency`), a producer in the same process
 * enqueueing one task at a time at `perSecond` (open loop: sends are not awaited before the next,
 * so a slow enqueue does not lower the offered rate), each stamped with the send time.
 */
export const latency = async (
  lib: LibAdapter,
  admin: Redis,
  n: number,
  perSecond: number,
  concurrency: number,
  timeoutMs: number
): Promise<LatencyResult> => {
  await resetRedis(admin)
  const samples: number[] = []
  const worker = await lib.startWorker(concurrency, (p) => {
    samples.push(nowMs() - p.t)
  })
  await sleep(300) // the worker reaches its idle wait
  const interval = 1000 / perSecond
  const sends: Promise<void>[] = []
  const t0 = nowMs()
  let sent = 0
  while (sent < n) {
    const due = Math.min(n, Math.floor((nowMs() - t0) / interval) + 1)
    while (sent < due) sends.push(lib.enqueueOne({ n: sent++, t: nowMs() }))
    if (sent < n) await sleep(Math.max(0, t0 + sent * interval - nowMs()))
  }
  const sendSeconds = (nowMs() - t0) / 1000
  await Promise.all(sends)
  const deadline = nowMs() + timeoutMs
  while (samples.length < n && nowMs() < deadline) await sleep(5)
  await worker.stop()
  if (samples.length < n)
    throw new Error(`${lib.name}: latency run received ${samples.length} of ${n} tasks within ${timeoutMs} ms`)
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    tasks: n,
    targetPerSecond: perSecond,
    achievedPerSecond: Math.round(n / sendSeconds),
    concurrency,
    p50Ms: round(percentile(sorted, 50), 3),
    p95Ms: round(percentile(sorted, 95), 3),
    p99Ms: round(percentile(sorted, 99), 3),
    maxMs: round(sorted[sorted.length - 1]!, 3),
    meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 3)
  }
}

/** The burst of the "scheduled lateness" scenario is due this long after its first write (the writes must end before). */
const burstLeadMs = 15_000

/** The retry delay of the "scheduled lateness" scenario's retries (issue 35: a 200 ms backoff). */
export const latenessRetryDelayMs = 200

export interface LatenessResult {
  /** Delayed tasks (due 100 ms to 5 s after they were sent): how late each started, ms. */
  readonly delayedTasks: number
  readonly delayedP50Ms: number
  readonly delayedP99Ms: number
  readonly delayedMaxMs: number
  /** Tasks whose first attempt failed: how late the second attempt started after failure + the retry delay, ms. */
  readonly retryTasks: number
  readonly retryP50Ms: number
  readonly retryP99Ms: number
  readonly retryMaxMs: number
  /** A burst written to be due at the same moment: ms from that moment until all were ready or started. */
  readonly burstTasks: number
  readonly burstAllReadyMs: number
}

const lateness = (samples: ReadonlyArray<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    p50: round(percentile(sorted, 50), 1),
    p99: round(percentile(sorted, 99), 1),
    max: round(sorted[sorted.length - 1]!, 1)
  }
}

const waitUntil = async (what: string, done: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(5)
  }
}

/**
 * Scheduled lateness on an idle worker (issue 35), on the wall clock (Date.now, which is what the
 * libraries schedule by): (1) `n` delayed tasks sent one by one, each due 100 ms to 5 s after its
 * send (spread evenly), lateness = start − due; (2) `n` tasks whose first attempt fails, retried
 * after a 200 ms delay, lateness = second start − (failure + 200 ms); (3) `burst` tasks written in
 * bulk to be due at one moment (15 s after the first write), time from that moment until every task
 * is ready (the library's waiting count) or started, within `concurrency` (taken but not started).
 */
export const scheduledLateness = async (
  lib: LibAdapter,
  admin: Redis,
  n: number,
  burst: number,
  concurrency: number,
  timeoutMs: number
): Promise<LatenessResult> => {
  const { enqueueDelayed, enqueueDelayedBulk, enqueueRetried, startDelayedWorker, readyCount } = lib
  if (!enqueueDelayed || !enqueueDelayedBulk || !enqueueRetried || !startDelayedWorker || !readyCount)
    throw new NotAvailable(`${lib.name} has no delayed tasks`)
  await resetRedis(admin)
  const delayed: number[] = []
  const retried: number[] = []
  const failedAt = new Map<number, number>()
  let phase: "delayed" | "retry" | "burst" = "delayed"
  let started = 0
  const worker = await startDelayedWorker(
    concurrency,
    (p, attempt) => {
      const now = Date.now()
      if (phase === "delayed") delayed.push(now - p.t)
      else if (phase === "retry") {
        if (attempt === 0) {
          failedAt.set(p.n, now)
          throw new Error("the first attempt fails")
        }
        retried.push(now - (failedAt.get(p.n)! + latenessRetryDelayMs))
      } else started++
    },
    { retryDelayMs: latenessRetryDelayMs }
  )
  try {
    await sleep(500) // the worker reaches its idle wait
    for (let i = 0; i < n; i++) {
      const delayMs = 100 + Math.round((4900 * i) / Math.max(1, n - 1))
      await enqueueDelayed({ n: i, t: Date.now() + delayMs }, delayMs)
    }
    await waitUntil(`${n} delayed tasks`, () => delayed.length >= n, 5000 + timeoutMs)
    phase = "retry"
    for (let i = 0; i < n; i++) {
      await enqueueRetried({ n: i, t: 0 }, latenessRetryDelayMs)
      await sleep(5)
    }
    await waitUntil(`${n} retried tasks`, () => retried.length >= n, timeoutMs)
    phase = "burst"
    const dueAt = Date.now() + burstLeadMs
    for (let i = 0; i < burst; i += bulkBatch) {
      await enqueueDelayedBulk(payloads(Math.min(bulkBatch, burst - i), i), dueAt - Date.now())
    }
    if (Date.now() >= dueAt)
      throw new Error(`${lib.name}: writing the burst of ${burst} took more than ${burstLeadMs} ms`)
    let readyAt = 0
    const deadline = dueAt + timeoutMs
    while (readyAt === 0) {
      if (Date.now() > deadline)
        throw new Error(`${lib.name}: the burst was not all ready within ${timeoutMs} ms of its due time`)
      const ready = started + (Date.now() >= dueAt - 50 ? await readyCount() : 0)
      if (ready >= burst - concurrency && Date.now() >= dueAt) readyAt = Date.now()
      else await sleep(2)
    }
    const d = lateness(delayed)
    const r = lateness(retried)
    return {
      delayedTasks: delayed.length,
      delayedP50Ms: d.p50,
      delayedP99Ms: d.p99,
      delayedMaxMs: d.max,
      retryTasks: retried.length,
      retryP50Ms: r.p50,
      retryP99Ms: r.p99,
      retryMaxMs: r.max,
      burstTasks: burst,
      burstAllReadyMs: readyAt - dueAt
    }
  } finally {
    await worker.stop()
  }
}

export interface FlowResult extends RateResult {
  /** Steps per flow (3). */
  readonly steps: number
  /** Redis commands per step: `redisCalls` (per flow) ÷ steps. */
  readonly redisCallsPerStep: number
  /** How the library's flows were configured. */
  readonly flowSettings: string
}

/**
 * "workflow3": `n` flows of three steps each (bench/libs/types.ts, FlowRunner), a worker at
 * `concurrency` started first (idle), then the flows started one call per flow by
 * `concurrentCallers` callers; measured from the first start to the n-th flow's final code, with
 * Node CPU, Redis CPU and commands over the same window plus the worker's stop, so per flow they
 * hold its start, its steps and its completion. Every flow's final code must have seen all three
 * results (else the run fails): effect-asynq's durable workflow vs BullMQ's FlowProducer.
 */
export const workflow3 = async (
  lib: LibAdapter,
  admin: Redis,
  n: number,
  concurrency: number,
  timeoutMs: number
): Promise<FlowResult> => {
  if (!lib.flows) throw new NotAvailable(`${lib.name} has no workflows or flows`)
  await resetRedis(admin)
  const runner = await lib.flows()
  try {
    const done = new Set<number>()
    const wrong: string[] = []
    let lastAt = 0
    let resolveAll!: () => void
    const all = new Promise<void>((r) => (resolveAll = r))
    const worker = await runner.startWorker(concurrency, (k, value) => {
      if (value !== flowValue(k)) wrong.push(`flow ${k}: ${value}, expected ${flowValue(k)}`)
      done.add(k)
      if (done.size === n) {
        lastAt = nowMs()
        resolveAll()
      }
    })
    await sleep(100)
    const before = await redisSnapshot(admin)
    await measuredWindow.begin()
    const cpu0 = nodeCpu()
    const t0 = nowMs()
    let next = 0
    const timer = setTimeout(() => resolveAll(), timeoutMs)
    const caller = async () => {
      while (next < n) await runner.addFlow(next++)
    }
    await Promise.all(Array.from({ length: concurrentCallers }, caller))
    await all
    clearTimeout(timer)
    await worker.stop()
    const nodeUs = nodeCpuDeltaUs(cpu0)
    await measuredWindow.end()
    const after = await redisSnapshot(admin)
    if (done.size < n)
      throw new Error(
        `${lib.name}: ${done.size} of ${n} flows completed within ${timeoutMs} ms (concurrency ${concurrency})`
      )
    if (wrong.length > 0) throw new Error(`${lib.name}: ${wrong.length} flows saw wrong step results, e.g. ${wrong[0]}`)
    const seconds = (lastAt - t0) / 1000
    const c = cost(n, nodeUs, redisDelta(before, after))
    return {
      tasks: n,
      seconds: round(seconds, 4),
      perSecond: Math.round(n / seconds),
      ...c,
      steps: flowSteps.length,
      redisCallsPerStep: round(c.redisCalls / flowSteps.length, 2),
      flowSettings: runner.settings
    }
  } finally {
    await runner.close()
  }
}
