/**
 * Measuring helpers: Redis INFO (cpu, memory, commandstats) snapshots and deltas, Node CPU time,
 * percentiles. Everything here only reads; `resetRedis` is the one write (FLUSHALL + RESETSTAT).
 */
import type { Redis } from "ioredis"

export interface RedisSnapshot {
  /** used_cpu_sys + used_cpu_user, in microseconds */
  readonly cpuUs: number
  readonly usedMemory: number
  /** command name → calls (commandstats) */
  readonly calls: ReadonlyMap<string, number>
}

const parseInfo = (text: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const line of text.split("\r\n")) {
    if (line === "" || line.startsWith("#")) continue
    const i = line.indexOf(":")
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1))
  }
  return out
}

/** Commands the benchmark itself sends to observe Redis; never counted against a library. */
const harnessCommands = new Set([
  "info",
  "config|resetstat",
  "flushall",
  "dbsize",
  "memory|usage",
  "ping",
  "client|setname"
])

export const redisSnapshot = async (admin: Redis): Promise<RedisSnapshot> => {
  const info = parseInfo(await admin.info("everything"))
  const cpuUs = Math.round((Number(info.get("used_cpu_sys")) + Number(info.get("used_cpu_user"))) * 1e6)
  const calls = new Map<string, number>()
  for (const [k, v] of info) {
    if (!k.startsWith("cmdstat_")) continue
    const name = k.slice("cmdstat_".length)
    if (harnessCommands.has(name)) continue
    const m = /calls=(\d+)/.exec(v)
    if (m) calls.set(name, Number(m[1]))
  }
  return { cpuUs, usedMemory: Number(info.get("used_memory")), calls }
}

export interface RedisDelta {
  readonly cpuUs: number
  readonly memoryBytes: number
  readonly calls: number
  readonly byCommand: Record<string, number>
}

/** What happened between two snapshots; commandstats must have been reset at `before`. */
export const redisDelta = (before: RedisSnapshot, after: RedisSnapshot): RedisDelta => {
  const byCommand: Record<string, number> = {}
  let calls = 0
  for (const [name, n] of after.calls) {
    const d = n - (before.calls.get(name) ?? 0)
    if (d > 0) {
      byCommand[name] = d
      calls += d
    }
  }
  return { cpuUs: after.cpuUs - before.cpuUs, memoryBytes: after.usedMemory - before.usedMemory, calls, byCommand }
}

/** Empties the benchmark Redis and zeroes its command statistics. */
export const resetRedis = async (admin: Redis): Promise<void> => {
  await admin.flushall()
  await admin.config("RESETSTAT")
}

export interface NodeCpu {
  readonly userUs: number
  readonly systemUs: number
}
export const nodeCpu = (): NodeCpu => {
  const u = process.cpuUsage()
  return { userUs: u.user, systemUs: u.system }
}
export const nodeCpuDeltaUs = (before: NodeCpu, after: NodeCpu = nodeCpu()): number =>
  after.userUs - before.userUs + (after.systemUs - before.systemUs)

/** Nearest-rank percentile of an ascending-sorted array. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

/**
 * The measured window, for `--profile`: the child sets these to start/stop a CPU profile, so the
 * profile holds exactly the measured work (not the fill, warm-up or setup). No-ops otherwise.
 */
export const measuredWindow: { begin: () => Promise<void>; end: () => Promise<void> } = {
  begin: async () => {},
  end: async () => {}
}

/** High-resolution wall clock in milliseconds (monotonic, shared by producer and handler in one process). */
export const nowMs = (): number => performance.now()

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Waits until `done()` is true, polling every `everyMs`; rejects after `timeoutMs` (bounded). */
export const waitUntil = async (done: () => boolean, timeoutMs: number, what: string, everyMs = 2): Promise<void> => {
  const deadline = nowMs() + timeoutMs
  while (!done()) {
    if (nowMs() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
