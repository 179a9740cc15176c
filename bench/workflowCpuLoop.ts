/**
 * `tsx bench/workflowCpuLoop.ts [--flows=3000] [--warmup=3000] [--concurrency=50] [--callers=50] [--turns=3]
 *  [--cachegrind [--flows2=6000] [--default-gc] [--keep=DIR]]`
 * — the Node CPU effect-asynq/workflow spends per flow of the "workflow3" shape (three activities,
 * started with `execute(…, { discard: true })` by `--callers` callers, run by the same process's
 * engine at `--concurrency`) once warm, through this checkout's `bench/libs/effectAsynq.ts` adapter,
 * on a private redis-server (bench/redisServer.ts).
 *
 * The children run an esbuild bundle of this file (packages external), as bench/main.ts runs its
 * child: no tsx loader, and none of the `__name` wrappers tsx adds to every named function.
 *
 * Each turn runs a fresh Node process: `--warmup` flows processed and discarded, then `--flows`
 * flows measured from the first start to the last flow's final code plus the worker's stop. It
 * prints Node CPU per flow (all of the process's threads), flows per second and Redis commands per
 * flow (INFO commandstats over the measured flows and the stop, less the INFO calls themselves).
 *
 * With `--cachegrind`, each turn runs two processes under
 * `valgrind --tool=cachegrind --cache-sim=no node --single-threaded` (redis-server outside it), one
 * with `--flows` and one with `--flows2` measured flows after the same warm-up, and prints the
 * difference of their instruction counts divided by the difference of the flow counts: the
 * instructions of one warm flow, with Node's startup, the warm-up and the shutdown cancelled out.
 * Under cachegrind Node also runs with V8's `--predictable-gc-schedule` (unless `--default-gc`):
 * V8 otherwise schedules collections by elapsed time too (its memory reducer runs full collections
 * when little is allocated per millisecond, as under valgrind). The counts still vary by a few %
 * from run to run (the flows' batching on the connection follows timing: commands per flow move
 * with it), so compare several turns, or runs of two trees side by side, with a large --flows2.
 * V8 goes on optimizing functions for thousands of flows: after a 1,000-flow warm-up a sixth of a
 * flow's instructions was Turbofan compiling; a 3,000-flow warm-up (the default) took the figure
 * from ~3.0 M to ~2.7 M instructions per flow and two trees run side by side agreed within 0.5 %.
 * `CPULOOP_CPUPROF=FILE` writes a .cpuprofile of a child's measured flows (each turn overwrites it).
 * `--keep=DIR` keeps each turn's two cachegrind files there (`cg_diff` of the two, then
 * `cg_annotate`, gives the instructions of the extra flows by function).
 */
import { spawn } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { bundleChild } from "./childBundle.js"
import { profileFile, startProfile } from "./cpuProfile.js"
import { Redis as IORedis } from "ioredis"
import { make } from "./libs/effectAsynq.js"
import { flowValue } from "./libs/types.js"
import { startBenchRedis } from "./redisServer.js"
import { median, optionOf, runTool } from "./toolCli.js"

const args = process.argv.slice(2)
const arg = optionOf(args)
const here = fileURLToPath(new URL("..", import.meta.url))
const keep = args.find((a) => a.startsWith("--keep="))?.slice(7)

interface ChildResult {
  readonly cpuUs: number
  readonly perSecond: number
  readonly commands: number
  /** Write and read system calls of the process per flow (/proc/self/io; 0 where there is none). */
  readonly writes: number
  readonly reads: number
}

/** The process's read and write system calls so far (Linux /proc/self/io), zeros elsewhere. */
const syscalls = (): { r: number; w: number } => {
  try {
    const io = readFileSync("/proc/self/io", "utf8")
    return { r: Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0), w: Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0) }
  } catch {
    return { r: 0, w: 0 }
  }
}

/** Total calls of every command (INFO commandstats). */
const commandCalls = async (admin: IORedis): Promise<number> => {
  const text = await admin.info("commandstats")
  let n = 0
  for (const m of text.matchAll(/calls=(\d+)/g)) n += Number(m[1])
  return n
}

/** The child's part: warm-up, then the measured flows; prints one JSON line. */
const child = async (url: string, flows: number, warmup: number, concurrency: number, callers: number) => {
  const lib = await make({ redisUrl: url, queue: "wfcpuloop" })
  const runner = await lib.flows!()
  const admin = new IORedis(url, { maxRetriesPerRequest: 1 })
  let seen = 0
  let target = 0
  let done!: () => void
  let all = Promise.resolve()
  // Every flow's final code must have seen its three results (as the workflow3 scenario checks).
  const worker = await runner.startWorker(concurrency, (n, value) => {
    if (value !== flowValue(n)) {
      console.error(`flow ${n}: ${value}, expected ${flowValue(n)}`)
      process.exit(1)
    }
    if (++seen === target) done()
  })
  const run = async (from: number, n: number) => {
    target = seen + n
    all = new Promise<void>((r) => (done = r))
    let next = from
    const end = from + n
    const caller = async () => {
      while (next < end) await runner.addFlow(next++)
    }
    await Promise.all(Array.from({ length: callers }, caller))
    await all
  }
  if (warmup > 0) await run(0, warmup)
  const commands0 = await commandCalls(admin)
  const file = profileFile()
  const profile = file === undefined ? undefined : await startProfile()
  const io0 = syscalls()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await run(warmup, flows)
  const ms = performance.now() - t0
  await worker.stop()
  const cpu = process.cpuUsage(cpu0)
  if (profile !== undefined) await profile(file!)
  const io = syscalls()
  // Less the INFO that read commands0 (counted once it ran).
  const commands = (await commandCalls(admin)) - commands0 - 1
  admin.disconnect()
  await runner.close()
  await lib.close?.()
  const r: ChildResult = {
    cpuUs: (cpu.user + cpu.system) / flows,
    perSecond: (flows / ms) * 1000,
    commands: commands / flows,
    writes: (io.w - io0.w) / flows,
    reads: (io.r - io0.r) / flows
  }
  process.stdout.write(`${JSON.stringify(r)}\n`)
  process.exit(0)
}

/** This file bundled for the children (childBundle.ts); one bundle per run: the tree may change while a run goes on. */
const bundle = (): Promise<string> =>
  bundleChild(
    fileURLToPath(import.meta.url),
    fileURLToPath(new URL(`./results/.build/workflowCpuLoop-${process.pid}.mjs`, import.meta.url))
  )

/** Runs one child (under cachegrind when `outFile` is given); its JSON line, and its instructions when under cachegrind. */
const runChild = async (
  script: string,
  url: string,
  flows: number,
  warmup: number,
  concurrency: number,
  callers: number,
  outFile: string | undefined,
  nodeFlags: ReadonlyArray<string> = []
): Promise<ChildResult & { instructions?: number }> => {
  const nodeArgs = [script, "--child", url, String(flows), String(warmup), String(concurrency), String(callers)]
  const [cmd, cmdArgs] =
    outFile === undefined
      ? [process.execPath, nodeArgs]
      : [
          "valgrind",
          [
            "--tool=cachegrind",
            "--cache-sim=no",
            `--cachegrind-out-file=${outFile}`,
            process.execPath,
            "--single-threaded",
            ...nodeFlags,
            ...nodeArgs
          ]
        ]
  const out = await new Promise<string>((ok, fail) => {
    const p = spawn(cmd, cmdArgs as Array<string>, { cwd: here, stdio: ["ignore", "pipe", "pipe"] })
    let text = ""
    let err = ""
    p.stdout.on("data", (d: Buffer) => (text += d.toString()))
    p.stderr.on("data", (d: Buffer) => (err += d.toString()))
    p.on("exit", (code) => (code === 0 ? ok(text) : fail(new Error(`child exit ${code}: ${err.slice(-2000)}`))))
  })
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as ChildResult
  if (outFile === undefined) return r
  const summary = /^summary:\s+(\d+)/m.exec(readFileSync(outFile, "utf8"))
  if (keep === undefined) rmSync(outFile, { force: true })
  if (!summary) throw new Error(`no summary line in ${outFile}`)
  return { ...r, instructions: Number(summary[1]) }
}

const main = async () => {
  const flows = Number(arg("flows", "3000"))
  const warmup = Number(arg("warmup", "3000"))
  const concurrency = Number(arg("concurrency", "50"))
  const callers = Number(arg("callers", "50"))
  const turns = Number(arg("turns", "3"))
  const cachegrind = args.includes("--cachegrind")
  const nodeFlags = args.includes("--default-gc") ? [] : ["--predictable-gc-schedule"]
  const flows2 = Number(arg("flows2", String(flows * 2)))
  const script = await bundle()
  const redis = await startBenchRedis()
  const admin = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  const reset = () => admin.flushall()
  try {
    const cpu: Array<number> = []
    const rates: Array<number> = []
    const commands: Array<number> = []
    const perFlow: Array<number> = []
    for (let t = 0; t < turns; t++) {
      await reset()
      if (!cachegrind) {
        const r = await runChild(script, redis.url, flows, warmup, concurrency, callers, undefined)
        cpu.push(r.cpuUs)
        rates.push(r.perSecond)
        commands.push(r.commands)
        console.log(
          `turn ${t + 1}: ${r.cpuUs.toFixed(1)} µs/flow, ${Math.round(r.perSecond)} flows/s, ${r.commands.toFixed(2)} commands/flow, ${r.writes.toFixed(2)} writes and ${r.reads.toFixed(2)} reads/flow`
        )
        continue
      }
      const out = (n: number) =>
        keep === undefined ? `/tmp/wfcpuloop-${process.pid}.out` : `${keep}/wfcpuloop-turn${t + 1}-${n}.out`
      const a = await runChild(script, redis.url, flows, warmup, concurrency, callers, out(flows), nodeFlags)
      await reset()
      const b = await runChild(script, redis.url, flows2, warmup, concurrency, callers, out(flows2), nodeFlags)
      const ipf = (b.instructions! - a.instructions!) / (flows2 - flows)
      perFlow.push(ipf)
      commands.push(b.commands)
      console.log(
        `turn ${t + 1}: ${Math.round(ipf)} instructions/flow (${a.instructions} at ${flows}, ${b.instructions} at ${flows2}), ${a.commands.toFixed(2)}/${b.commands.toFixed(2)} commands/flow`
      )
    }
    if (cachegrind)
      console.log(
        `median: ${Math.round(median(perFlow))} instructions/flow, ${median(commands).toFixed(2)} commands/flow (min ${Math.round(Math.min(...perFlow))}, max ${Math.round(Math.max(...perFlow))})`
      )
    else
      console.log(
        `median: ${median(cpu).toFixed(1)} µs/flow, ${Math.round(median(rates))} flows/s, ${median(commands).toFixed(2)} commands/flow`
      )
  } finally {
    admin.disconnect()
    await redis.stop()
    rmSync(script, { force: true })
  }
}

if (args[0] === "--child")
  runTool(() => child(args[1]!, Number(args[2]), Number(args[3]), Number(args[4]), Number(args[5])))
else runTool(main)
