/**
 * `tsx bench/redisCostPerTask.ts [--lib=effect-asynq ...] [--src=DIR ...] [--bytes=102400] [--tasks=2000]
 * [--concurrency=100] [--turns=3] [--gc]` — where a worker's Redis CPU goes, per processed task: each
 * library (`--lib`, default effect-asynq and bee-queue; effect-asynq from each `--src` checkout,
 * default this one) processes `--tasks` pre-filled tasks whose payload carries a string of
 * `--bytes` (as the payload-size scenarios: `payloadBody`), with a fresh worker at `--concurrency`,
 * in turns on one private redis-server. Prints the worker's Node CPU and Redis CPU per task (user
 * and sys, from INFO cpu; and how much of it Redis's main thread used, the rest being its background
 * threads: jemalloc's purging, lazy frees), the minor page faults of redis-server per task (memory
 * touched for the first time, or again after Redis gave it back), and the commands that took the most of Redis's (INFO commandstats: calls
 * and µs per task; EXEC's time includes the commands inside its MULTI), with the reads and writes
 * of Redis's event loop per task (INFO stats: how many separate writes of the worker's arrived, and
 * how many socket writes Redis made). Each turn runs a short warm-up round first (its own
 * worker), as the benchmark's warm-up does, so the measured worker is a fresh one in a warm process.
 * `--gc`: the children run with V8's `--trace-gc`; each turn also prints the measured worker's
 * scavenges and mark-compacts (count and pause ms) and the peak of its ArrayBuffer memory
 * (`process.memoryUsage().arrayBuffers`, sampled every 25 ms): socket chunks and message bytes
 * freed by scavenges keep that low; ones promoted to the old generation pile up until a mark-compact.
 * `CPULOOP_CPUPROF=PREFIX` writes a .cpuprofile of each measured worker (`PREFIX.<lib>.cpuprofile`,
 * overwritten turn by turn).
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Redis } from "ioredis"
import { profileFile, startProfile } from "./cpuProfile.js"
import { startBenchRedis } from "./redisServer.js"
import { payloadBody } from "./scenarios.js"
import type { LibAdapter, LibName } from "./libs/types.js"
import { optionOf, optionsOf, runTool } from "./toolCli.js"

const args = process.argv.slice(2)
const arg = optionOf(args)
const all = optionsOf(args)
const here = fileURLToPath(new URL("..", import.meta.url))
const adapterFile: Record<string, string> = {
  "effect-asynq": "effectAsynq",
  "bee-queue": "beeQueue",
  bullmq: "bullmq"
}

interface Measured {
  /** The worker process's own CPU (all its threads) per task. */
  readonly nodeUs: number
  /** Reads and writes Redis's event loop made per task (INFO stats: the client's separate writes, Redis's socket writes). */
  readonly reads: number
  readonly writes: number
  readonly userUs: number
  readonly sysUs: number
  /** Of user + sys, what Redis's main thread (the one that runs commands) used; the rest is its background threads (jemalloc's purging, lazy frees). */
  readonly mainUs: number
  /** Minor page faults of the redis-server process per task (/proc/<pid>/stat): memory Redis touched for the first time, or again after giving it back. */
  readonly faults: number
  readonly commands: ReadonlyArray<{ readonly name: string; readonly calls: number; readonly us: number }>
  /** Peak ArrayBuffer memory during the measured run (MB). */
  readonly arrayBuffersPeakMb: number
}

/** Printed by a child around its measured run, so the parent can tell its --trace-gc lines apart. */
const gcStart = "gc-window-start"
const gcEnd = "gc-window-end"

/** The scavenges and mark-compacts `--trace-gc` printed between the markers: counts and pause ms. */
const gcSummary = (out: string): string => {
  const lines = out.split("\n")
  const window = lines.slice(lines.indexOf(gcStart) + 1, lines.indexOf(gcEnd))
  const of = (kind: RegExp) => {
    const hits = window.filter((l) => kind.test(l))
    const ms = hits.reduce((a, l) => a + Number(/MB, ([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0), 0)
    return `${hits.length} (${ms.toFixed(1)} ms)`
  }
  return `scavenges ${of(/Scavenge/)}, mark-compacts ${of(/Mark-Compact/)}`
}

const stat = (info: string, key: string): number => Number(new RegExp(`${key}:([\\d.]+)`).exec(info)?.[1] ?? 0)

/** The minor page faults of process `pid` so far (field 10 of /proc/<pid>/stat), or NaN where there is no /proc. */
const minorFaults = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7])
  } catch {
    return Number.NaN
  }
}

/** The child's part: one library's worker over `n` tasks, measured; prints one JSON line. */
const child = async (src: string, lib: LibName, url: string, n: number, bytes: number, concurrency: number) => {
  const { make } = (await import(pathToFileURL(`${src}/bench/libs/${adapterFile[lib]}.ts`).href)) as {
    make: (o: { redisUrl: string; queue: string }) => Promise<LibAdapter>
  }
  const admin = new Redis(url)
  await admin.flushall()
  const redisPid = Number(/process_id:(\d+)/.exec(await admin.info("server"))?.[1])
  const adapter = await make({ redisUrl: url, queue: "cost" })
  const round = async (count: number, profiled = false): Promise<Measured> => {
    for (let i = 0; i < count; i += 200)
      await adapter.enqueueBulk(
        Array.from({ length: Math.min(200, count - i) }, (_, k) => ({ n: i + k, t: 0, s: payloadBody(bytes, i + k) }))
      )
    await admin.config("RESETSTAT")
    const statsBefore = await admin.info("stats")
    const faults0 = minorFaults(redisPid)
    const before = await admin.info("cpu")
    const file = profiled ? profileFile() : undefined
    const profile = file === undefined ? undefined : await startProfile()
    if (profiled) process.stdout.write(`${gcStart}\n`)
    let arrayBuffersPeak = 0
    const sampler = setInterval(() => {
      arrayBuffersPeak = Math.max(arrayBuffersPeak, process.memoryUsage().arrayBuffers)
    }, 25)
    const cpu0 = process.cpuUsage()
    let seen = 0
    let done!: () => void
    const finished = new Promise<void>((ok) => (done = ok))
    const worker = await adapter.startWorker(concurrency, () => {
      if (++seen === count) done()
    })
    await finished
    const cpu = process.cpuUsage(cpu0)
    clearInterval(sampler)
    if (profiled) process.stdout.write(`${gcEnd}\n`)
    if (profile !== undefined) await profile(`${file}.${lib}.cpuprofile`)
    const after = await admin.info("cpu")
    const faults1 = minorFaults(redisPid)
    const stats = await admin.info("commandstats")
    const statsAfter = await admin.info("stats")
    await worker.stop()
    const commands = stats
      .split("\n")
      .map((line) => /^cmdstat_([\w|-]+):calls=(\d+),usec=(\d+)/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && !/^(info|config)/.test(m[1]!))
      .map((m) => ({ name: m[1]!, calls: Number(m[2]) / count, us: Number(m[3]) / count }))
      .sort((a, b) => b.us - a.us)
    return {
      nodeUs: (cpu.user + cpu.system) / count,
      reads: (stat(statsAfter, "total_reads_processed") - stat(statsBefore, "total_reads_processed")) / count,
      writes: (stat(statsAfter, "total_writes_processed") - stat(statsBefore, "total_writes_processed")) / count,
      userUs: ((stat(after, "used_cpu_user") - stat(before, "used_cpu_user")) * 1e6) / count,
      sysUs: ((stat(after, "used_cpu_sys") - stat(before, "used_cpu_sys")) * 1e6) / count,
      faults: (faults1 - faults0) / count,
      mainUs:
        ((stat(after, "used_cpu_user_main_thread") -
          stat(before, "used_cpu_user_main_thread") +
          stat(after, "used_cpu_sys_main_thread") -
          stat(before, "used_cpu_sys_main_thread")) *
          1e6) /
        count,
      commands,
      arrayBuffersPeakMb: arrayBuffersPeak / 1e6
    }
  }
  await round(Math.min(n, 500))
  const r = await round(n, true)
  await adapter.close?.()
  admin.disconnect()
  process.stdout.write(`${JSON.stringify(r)}\n`)
  process.exit(0)
}

const main = async () => {
  const libs = (all("lib").length > 0 ? all("lib") : ["effect-asynq", "bee-queue"]) as Array<LibName>
  const srcs = all("src").map((s) => resolve(s))
  if (srcs.length === 0) srcs.push(here)
  const n = Number(arg("tasks", "2000"))
  const bytes = Number(arg("bytes", "102400"))
  const concurrency = Number(arg("concurrency", "100"))
  const turns = Number(arg("turns", "3"))
  const gc = args.includes("--gc")
  const runs = libs.flatMap(
    (lib): Array<{ lib: LibName; src: string }> =>
      lib === "effect-asynq" ? srcs.map((src) => ({ lib, src })) : [{ lib, src: here }]
  )
  const redis = await startBenchRedis()
  const totals = new Map<string, Array<number>>()
  const nodeTotals = new Map<string, Array<number>>()
  try {
    for (let t = 0; t < turns; t++)
      for (const { lib, src } of runs) {
        const out = await new Promise<string>((ok, fail) => {
          const p = spawn(
            process.execPath,
            [
              ...(gc ? ["--trace-gc"] : []),
              "--import",
              "tsx",
              fileURLToPath(import.meta.url),
              "--child",
              src,
              lib,
              redis.url,
              String(n),
              String(bytes),
              String(concurrency)
            ],
            { cwd: src, stdio: ["ignore", "pipe", "inherit"] }
          )
          let text = ""
          p.stdout.on("data", (d: Buffer) => (text += d.toString()))
          p.on("exit", (code) => (code === 0 ? ok(text) : fail(new Error(`${lib} ${src}: exit ${code}`))))
        })
        const m = JSON.parse(
          out
            .trim()
            .split("\n")
            .filter((l) => l.startsWith("{"))
            .at(-1)!
        ) as Measured
        const name = lib === "effect-asynq" && srcs.length > 1 ? `${lib} (${src})` : lib
        totals.set(name, [...(totals.get(name) ?? []), m.userUs + m.sysUs])
        nodeTotals.set(name, [...(nodeTotals.get(name) ?? []), m.nodeUs])
        const top = m.commands
          .slice(0, 6)
          .map((c) => `${c.name} ${c.calls.toFixed(2)}× ${c.us.toFixed(1)} µs`)
          .join(", ")
        console.log(
          `turn ${t + 1} ${name}: Node CPU ${m.nodeUs.toFixed(1)} µs/task; Redis reads ${m.reads.toFixed(2)}, writes ${m.writes.toFixed(2)} per task; Redis CPU ${(m.userUs + m.sysUs).toFixed(1)} µs/task (user ${m.userUs.toFixed(1)}, sys ${m.sysUs.toFixed(1)}; main thread ${m.mainUs.toFixed(1)}; ${m.faults.toFixed(1)} page faults); ${top}`
        )
        if (gc)
          console.log(`  gc ${name}: ${gcSummary(out)}; ArrayBuffer memory peak ${m.arrayBuffersPeakMb.toFixed(1)} MB`)
      }
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((x, y) => x + y, 0) / xs.length
    for (const [name, xs] of totals)
      console.log(
        `mean ${name}: Redis CPU ${mean(xs).toFixed(1)} µs/task, Node CPU ${mean(nodeTotals.get(name)!).toFixed(1)} µs/task over ${xs.length} turns`
      )
  } finally {
    await redis.stop()
  }
}

if (args[0] === "--child")
  runTool(() => child(args[1]!, args[2] as LibName, args[3]!, Number(args[4]), Number(args[5]), Number(args[6])))
else runTool(main)
