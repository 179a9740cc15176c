/**
 * Runs ONE scenario for ONE library in a fresh Node process (bench/main.ts bundles this file with
 * esbuild and forks it), so the
 * Node CPU figure only holds that library's work and no library inherits another's heap or JIT
 * state. A short warm-up of the same scenario runs first and is discarded.
 * Input: argv[2] = JSON ChildJob. Output: one IPC message { ok: true, result } | { ok: false, error }.
 */
import { Redis } from "ioredis"
import { restoreFastStringPrototype } from "../src/redis/fastStringPrototype.js"
import type { AdapterFactory, LibName } from "./libs/types.js"
import { NotAvailable } from "./libs/types.js"
import {
  enqueueBulk,
  enqueueConcurrent,
  enqueueSerial,
  latency,
  processSteady,
  processThroughput,
  scheduledLateness,
  workflow3
} from "./scenarios.js"
import { measuredWindow, resetRedis } from "./measure.js"

export type ScenarioName =
  | "enqueueSerial"
  | "enqueueConcurrent"
  | "enqueueBulk"
  | "process"
  | "processSteady"
  | "latency"
  | "scheduledLateness"
  | "workflow3"

export interface ChildJob {
  readonly lib: LibName
  readonly scenario: ScenarioName
  readonly redisUrl: string
  readonly tasks: number
  readonly warmup: number
  readonly concurrency: number
  readonly perSecond: number
  readonly timeoutMs: number
  /** Write a CPU profile of the measured window (not the warm-up or fill) to this file. */
  readonly profileFile?: string
  /** The payload-size scenarios: each task carries a body of this many bytes (enqueueSerial, enqueueBulk, process). */
  readonly payloadBytes?: number
}

export type ChildReply =
  | { ok: true; result: unknown; settings: string }
  | { ok: false; error: string; pending: boolean }

const factories: Record<LibName, () => Promise<AdapterFactory>> = {
  "effect-asynq": async () => (await import("./libs/effectAsynq.js")).make,
  bullmq: async () => (await import("./libs/bullmq.js")).make,
  "bee-queue": async () => (await import("./libs/beeQueue.js")).make,
  floor: async () => (await import("./libs/roundTripFloor.js")).make
}

/**
 * Libraries that load ioredis 6 themselves. Loading it leaves `String.prototype` slow for the whole
 * process (src/redis/fastStringPrototype.ts); this harness loads it for its admin connection, so for
 * a library that does not, that is undone first: each library runs as its own dependencies leave it.
 */
const loadsIoredis: ReadonlySet<LibName> = new Set<LibName>(["effect-asynq", "bullmq"])

/** Delayed and retried tasks of the lateness scenario for a burst of `burst` (200 in a full run). */
const latenessTasks = (burst: number) => Math.max(20, Math.min(200, Math.round(burst / 100)))

const run = async (job: ChildJob): Promise<{ result: unknown; settings: string }> => {
  if (!loadsIoredis.has(job.lib)) restoreFastStringPrototype()
  const admin = new Redis(job.redisUrl, { maxRetriesPerRequest: 1, connectionName: "bench-admin" })
  admin.on("error", () => {})
  const lib = await (await factories[job.lib]())({ redisUrl: job.redisUrl, queue: "bench" })
  try {
    const once = (n: number) => {
      switch (job.scenario) {
        case "enqueueSerial":
          return enqueueSerial(lib, admin, n, job.payloadBytes)
        case "enqueueConcurrent":
          return enqueueConcurrent(lib, admin, n)
        case "enqueueBulk":
          return enqueueBulk(lib, admin, n, job.payloadBytes)
        case "process":
          return processThroughput(lib, admin, n, job.concurrency, job.timeoutMs, job.payloadBytes)
        case "processSteady":
          // The warm-up runs inside the measured worker (scenarios.ts: processSteady).
          return processSteady(lib, admin, n, job.concurrency, job.timeoutMs, job.warmup)
        case "latency":
          return latency(lib, admin, n, job.perSecond, job.concurrency, job.timeoutMs)
        case "scheduledLateness":
          // n: the burst; the delayed and retried tasks: latenessTasks (runs on the wall clock, no warm-up).
          return scheduledLateness(lib, admin, latenessTasks(n), n, job.concurrency, job.timeoutMs)
        case "workflow3":
          return workflow3(lib, admin, n, job.concurrency, job.timeoutMs)
      }
    }
    if (job.warmup > 0 && job.scenario !== "processSteady" && job.scenario !== "scheduledLateness")
      await once(job.warmup)
    if (job.profileFile !== undefined) await profileMeasuredWindow(job.profileFile)
    const result = await once(job.tasks)
    await resetRedis(admin)
    return { result, settings: lib.settings }
  } finally {
    await lib.close()
    admin.disconnect()
  }
}

/** Starts the V8 sampling profiler when the measured window opens and writes the profile when it closes. */
const profileMeasuredWindow = async (file: string) => {
  const { Session } = await import("node:inspector/promises")
  const { writeFileSync } = await import("node:fs")
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 100 })
  measuredWindow.begin = async () => {
    await session.post("Profiler.start")
  }
  measuredWindow.end = async () => {
    const { profile } = await session.post("Profiler.stop")
    writeFileSync(file, JSON.stringify(profile))
  }
}

const job = JSON.parse(process.argv[2] ?? "{}") as ChildJob
const send = (reply: ChildReply) =>
  new Promise<void>((resolve) => {
    if (process.send) process.send(reply, () => resolve())
    else {
      console.log(JSON.stringify(reply))
      resolve()
    }
  })

run(job)
  .then(
    ({ result, settings }) => send({ ok: true, result, settings }),
    (e: unknown) =>
      send({ ok: false, error: e instanceof Error ? e.message : String(e), pending: e instanceof NotAvailable })
  )
  .finally(() => {
    // libraries may leave timers behind after close(); this process's job is done
    process.exit(0)
  })
