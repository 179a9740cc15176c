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
 */
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { startBenchRedis } from "./redisServer.js"

const args = process.argv.slice(2)
const arg = (name: string, fallback: string): string => {
  const hit = args.find((a) => a.startsWith(`--${name}=`))
  return hit === undefined ? fallback : hit.slice(name.length + 3)
}
const here = fileURLToPath(new URL("..", import.meta.url))

/** The child's part: one checkout's worker, measured; prints one JSON line. */
const child = async (src: string, url: string, tasks: number, warmup: number, concurrency: number) => {
  const { make } = (await import(pathToFileURL(`${src}/bench/libs/effectAsynq.ts`).href)) as {
    make: (o: { redisUrl: string; queue: string }) => Promise<{
      enqueueBulk: (p: Array<{ n: number; t: number }>) => Promise<void>
      startWorker: (c: number, h: () => void) => Promise<{ stop: () => Promise<void> }>
      close?: () => Promise<void>
    }>
  }
  const lib = await make({ redisUrl: url, queue: "cpuloop" })
  const run = async (n: number) => {
    for (let i = 0; i < n; i += 1000)
      await lib.enqueueBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ n: i + k, t: 0 })))
    let seen = 0
    let done!: () => void
    const all = new Promise<void>((r) => (done = r))
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const worker = await lib.startWorker(concurrency, () => {
      if (++seen === n) done()
    })
    await all
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    await worker.stop()
    return { cpuUs: (cpu.user + cpu.system) / n, perSecond: (n / ms) * 1000 }
  }
  if (warmup > 0) await run(warmup)
  const r = await run(tasks)
  await lib.close?.()
  process.stdout.write(`${JSON.stringify(r)}\n`)
  process.exit(0)
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const main = async () => {
  const srcs = args.filter((a) => a.startsWith("--src=")).map((a) => resolve(a.slice(6)))
  if (srcs.length === 0) srcs.push(here)
  const tasks = Number(arg("tasks", "40000"))
  const warmup = Number(arg("warmup", "20000"))
  const concurrency = Number(arg("concurrency", "100"))
  const turns = Number(arg("turns", "4"))
  const redis = await startBenchRedis()
  const results = new Map<string, Array<{ cpuUs: number; perSecond: number }>>()
  try {
    for (let t = 0; t < turns; t++) {
      for (const src of srcs) {
        const out = await new Promise<string>((ok, fail) => {
          const p = spawn(
            process.execPath,
            [
              "--import",
              "tsx",
              fileURLToPath(import.meta.url),
              "--child",
              src,
              redis.url,
              String(tasks),
              String(warmup),
              String(concurrency)
            ],
            { cwd: src, stdio: ["ignore", "pipe", "inherit"] }
          )
          let text = ""
          p.stdout.on("data", (d: Buffer) => (text += d.toString()))
          p.on("exit", (code) => (code === 0 ? ok(text) : fail(new Error(`${src}: exit ${code}`))))
        })
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
  void child(args[1]!, args[2]!, Number(args[3]), Number(args[4]), Number(args[5])).catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
else
  void main().catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
