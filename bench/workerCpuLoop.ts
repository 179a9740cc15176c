/**
 * `tsx bench/workerCpuLoop.ts [--src=DIR ...] [--tasks=40000] [--warmup=20000] [--concurrency=100] [--turns=4]`
 * — the Node CPU a worker spends per no-op task once warm, for telling two checkouts apart when
 * the full benchmark's rates swing too much: each `--src` checkout (default: this one; give it
 * several times to compare) runs in its own Node process, in turns (A, B, A, B, …), on one
 * private redis-server. In each process: `--warmup` tasks processed and discarded, then
 * `--tasks` tasks enqueued in batches of 1,000 and processed at `--concurrency` by a fresh worker,
 * measured from its start to the last handler call. Prints Node CPU per task (all of the process's
 * threads) and tasks per second, per turn and the median per checkout. Each checkout runs through
 * its own `bench/libs/effectAsynq.ts` adapter, so older checkouts work as they are.
 *
 * `--instructions` (and/or `--syscalls`): counts instead of CPU time, for A/B on a
 * noisy machine. Each measurement is two child runs with the same warm-up and two measured counts
 * (`--counts=2000,6000`); the difference of their totals divided by the difference of the counts is
 * the cost per task, so node's startup, the module loading and the warm-up cancel. Here the parent
 * enqueues all tasks before the child starts (the warm-up's on queue `cpuloopw`, the measured ones
 * on `cpuloop`, through this checkout's client), so only the worker's side is counted. A child runs
 * under `valgrind --tool=cachegrind --cache-sim=no node --single-threaded --predictable-gc-schedule`
 * (instructions, all of the process's threads; redis-server runs natively) or `strace -f -c`
 * (syscalls of all threads; kernel time is not in instruction counts). Each checkout first runs once natively so tsx's transform
 * cache is warm. `--warmup` defaults to 3000 in this mode. Under valgrind the worker runs ~30x
 * slower while Redis does not, so reply batching can differ from a native run; compare checkouts
 * with each other, not with the CPU-time figures.
 *
 * `--gc`: the same two-run difference, natively under `--predictable-gc-schedule --trace-gc`:
 * scavenges per task (young-generation allocation). Every mode also prints the worker's Redis
 * script calls (EVALSHA + EVAL in INFO commandstats) per task, i.e. how well its calls batch.
 *
 * Measured on this VM (28 Nov): two identical cachegrind runs side by side agreed within 0.2 %, but
 * from turn to turn the per-task figure was NOT repeatable for this workload (the same checkout gave
 * 98k and 272k instructions per task) while the script calls per task hardly moved. A likely reason,
 * not proven: under valgrind a run lasts minutes, so the worker's time-driven work (heartbeats,
 * maintenance ticks, lease extension, V8's time-based heuristics) weighs far more than natively and
 * varies with the machine's load. `--gc` figures repeat. `CPULOOP_CPUPROF=FILE` in a child's
 * environment writes a .cpuprofile of its measured run only (summarize with `bench/cpuprofTop.ts`).
 */
import { spawn } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Redis } from "ioredis"
import { startProfile } from "./cpuProfile.js"
import { startBenchRedis } from "./redisServer.js"
import { median, optionOf, runTool } from "./toolCli.js"

const args = process.argv.slice(2)
const arg = optionOf(args)
const here = fileURLToPath(new URL("..", import.meta.url))

/** The child's part: one checkout's worker, measured; prints one JSON line. */
const child = async (
  src: string,
  url: string,
  tasks: number,
  warmup: number,
  concurrency: number,
  preEnqueued: boolean
) => {
  const { make } = (await import(pathToFileURL(`${src}/bench/libs/effectAsynq.ts`).href)) as {
    make: (o: { redisUrl: string; queue: string }) => Promise<{
      enqueueBulk: (p: Array<{ n: number; t: number }>) => Promise<void>
      startWorker: (c: number, h: () => void) => Promise<{ stop: () => Promise<void> }>
      close?: () => Promise<void>
    }>
  }
  const lib = await make({ redisUrl: url, queue: "cpuloop" })
  const warmLib = preEnqueued ? await make({ redisUrl: url, queue: "cpuloopw" }) : lib
  const run = async (n: number, on = lib) => {
    if (!preEnqueued) await enqueue(on, n)
    let seen = 0
    let done!: () => void
    const all = new Promise<void>((r) => (done = r))
    const profile = on === lib && process.env.CPULOOP_CPUPROF !== undefined ? await startProfile() : undefined
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const worker = await on.startWorker(concurrency, () => {
      if (++seen === n) done()
    })
    await all
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    if (profile !== undefined) await profile(process.env.CPULOOP_CPUPROF!)
    await worker.stop()
    return { cpuUs: (cpu.user + cpu.system) / n, perSecond: (n / ms) * 1000 }
  }
  if (warmup > 0) await run(warmup, warmLib)
  const r = await run(tasks)
  if (warmLib !== lib) await warmLib.close?.()
  await lib.close?.()
  process.stdout.write(`${JSON.stringify(r)}\n`)
  process.exit(0)
}

/** `n` no-op tasks enqueued in batches of 1,000. */
const enqueue = async (lib: { enqueueBulk: (p: Array<{ n: number; t: number }>) => Promise<void> }, n: number) => {
  for (let i = 0; i < n; i += 1000)
    await lib.enqueueBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ n: i + k, t: 0 })))
}

/** One child process; `wrap` is the command (and its arguments) it runs under, if any. */
const runChild = (src: string, wrap: ReadonlyArray<string>, nodeFlags: ReadonlyArray<string>, childArgs: string[]) =>
  new Promise<string>((ok, fail) => {
    const argv = [...wrap, process.execPath, ...nodeFlags, "--import", "tsx", fileURLToPath(import.meta.url)]
    const p = spawn(argv[0]!, [...argv.slice(1), "--child", src, ...childArgs], {
      cwd: src,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let text = ""
    p.stdout.on("data", (d: Buffer) => (text += d.toString()))
    p.on("exit", (code) => (code === 0 ? ok(text) : fail(new Error(`${src}: exit ${code}`))))
  })

/** Total instructions from a cachegrind output file (its `summary:` line). */
const cachegrindTotal = (file: string) => Number(/^summary:\s+(\d+)/m.exec(readFileSync(file, "utf8"))![1])

/** Total syscalls from `strace -c -o` output (the `total` line's calls column). */
const straceTotal = (file: string) => {
  const line = readFileSync(file, "utf8")
    .split("\n")
    .find((l) => /\stotal\s*$/.test(l))!
  return Number(line.trim().split(/\s+/)[3])
}

/**
 * `--instructions` / `--syscalls`: per checkout and turn, two runs (counts a < b, same warm-up) under
 * cachegrind and/or strace; per task = (total(b) − total(a)) / (b − a).
 */
const countMain = async (srcs: ReadonlyArray<string>) => {
  type Kind = "instructions" | "syscalls" | "scavenges" | "native"
  const kinds = [
    ...(args.includes("--instructions") ? ["instructions" as const] : []),
    ...(args.includes("--syscalls") ? ["syscalls" as const] : []),
    ...(args.includes("--gc") ? ["scavenges" as const] : [])
  ]
  const [a, b] = arg("counts", "2000,6000").split(",").map(Number) as [number, number]
  const warmup = Number(arg("warmup", "3000"))
  const concurrency = Number(arg("concurrency", "100"))
  const turns = Number(arg("turns", "2"))
  const redis = await startBenchRedis()
  const { make } = (await import(pathToFileURL(`${here}/bench/libs/effectAsynq.ts`).href)) as {
    make: (o: { redisUrl: string; queue: string }) => Promise<{
      enqueueBulk: (p: Array<{ n: number; t: number }>) => Promise<void>
      close?: () => Promise<void>
    }>
  }
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 })
  /** Script calls Redis ran (EVALSHA and EVAL in INFO commandstats): the worker's round trips, batched or not. */
  const commandCalls = async () =>
    [...(await admin.info("commandstats")).matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0
    )
  const warmQueue = await make({ redisUrl: redis.url, queue: "cpuloopw" })
  const queue = await make({ redisUrl: redis.url, queue: "cpuloop" })
  const once = async (src: string, kind: Kind, n: number) => {
    await enqueue(warmQueue, warmup)
    await enqueue(queue, n)
    const file = join(tmpdir(), `cpuloop-${process.pid}-${kind}.out`)
    const wrap =
      kind === "instructions"
        ? ["valgrind", "-q", "--tool=cachegrind", "--cache-sim=no", `--cachegrind-out-file=${file}`]
        : kind === "syscalls"
          ? ["strace", "-f", "-c", "-o", file]
          : []
    const calls0 = await commandCalls()
    const flags =
      kind === "instructions"
        ? ["--single-threaded", "--predictable-gc-schedule"]
        : kind === "scavenges"
          ? ["--predictable-gc-schedule", "--trace-gc"]
          : []
    const out = await runChild(src, wrap, flags, [redis.url, String(n), String(warmup), String(concurrency), "pre"])
    commands.push((await commandCalls()) - calls0)
    if (kind === "native") return 0
    if (kind === "scavenges") return out.split("\n").filter((l) => l.includes("Scavenge")).length
    const total = kind === "instructions" ? cachegrindTotal(file) : straceTotal(file)
    rmSync(file)
    return total
  }
  const results = new Map<string, Array<number>>()
  const commands: Array<number> = []
  try {
    for (const src of srcs) await once(src, "native", 100)
    for (let t = 0; t < turns; t++)
      for (const src of srcs)
        for (const kind of kinds) {
          const ta = await once(src, kind, a)
          const tb = await once(src, kind, b)
          const per = (tb - ta) / (b - a)
          const [ca, cb] = commands.slice(-2) as [number, number]
          results.set(`${kind} ${src}`, [...(results.get(`${kind} ${src}`) ?? []), per])
          console.log(
            `turn ${t + 1} ${src}: ${kind} ${ta} (${a} tasks), ${tb} (${b} tasks): ${per.toFixed(kind === "instructions" ? 0 : 3)} per task; script calls ${ca}, ${cb}: ${((cb - ca) / (b - a)).toFixed(3)} per task`
          )
        }
    for (const [key, rs] of results)
      console.log(`median ${key}: ${median(rs).toFixed(key.startsWith("instructions") ? 0 : 3)} per task`)
  } finally {
    await warmQueue.close?.()
    await queue.close?.()
    admin.disconnect()
    await redis.stop()
  }
}

const main = async () => {
  const srcs = args.filter((a) => a.startsWith("--src=")).map((a) => resolve(a.slice(6)))
  if (srcs.length === 0) srcs.push(here)
  if (["--instructions", "--syscalls", "--gc"].some((a) => args.includes(a))) return countMain(srcs)
  const tasks = Number(arg("tasks", "40000"))
  const warmup = Number(arg("warmup", "20000"))
  const concurrency = Number(arg("concurrency", "100"))
  const turns = Number(arg("turns", "4"))
  const redis = await startBenchRedis()
  const results = new Map<string, Array<{ cpuUs: number; perSecond: number }>>()
  try {
    for (let t = 0; t < turns; t++) {
      for (const src of srcs) {
        const out = await runChild(src, [], [], [redis.url, String(tasks), String(warmup), String(concurrency), "self"])
        const r = JSON.parse(out.trim().split("\n").at(-1)!) as { cpuUs: number; perSecond: number }
        results.set(src, [...(results.get(src) ?? []), r])
        console.log(`turn ${t + 1} ${src}: ${r.cpuUs.toFixed(1)} µs/task, ${Math.round(r.perSecond)} tasks/s`)
      }
    }
    for (const [src, rs] of results)
      console.log(
        `median ${src}: ${median(rs.map((r) => r.cpuUs)).toFixed(1)} µs/task, ${Math.round(median(rs.map((r) => r.perSecond)))} tasks/s`
      )
  } finally {
    await redis.stop()
  }
}

if (args[0] === "--child")
  runTool(() => child(args[1]!, args[2]!, Number(args[3]), Number(args[4]), Number(args[5]), args[6] === "pre"))
else runTool(main)
