/**
 * `npm run bench` — effect-asynq, BullMQ and bee-queue side by side, in one run, on one private
 * redis-server (started here on a free loopback port, stopped at the end), with "floor" — the round
 * trip itself on a raw socket, no library (bench/libs/roundTripFloor.ts) — as a reference in the
 * scenarios that are one round trip per task (enqueue one by one, latency).
 *
 *   npm run bench                      20,000 tasks per scenario, latency over 5,000 tasks at 500/s
 *   npm run bench -- --quick           2,000 tasks (latency: 500), for a sanity run
 *   npm run bench -- --only=bullmq,bee-queue
 *   npm run bench -- --scenarios=process100,latency   (see `scenarioList`)
 *   npm run bench -- --scenarios=process10steady,process100steady
 *                                      opt-in: one long-running worker, measured after its first 50,000
 *                                      tasks (--warmup sets that number); the default scenarios start a
 *                                      fresh worker in the measured window
 *   npm run bench -- --scenarios=scheduledLateness
 *                                      scheduled/delayed tasks on an idle worker (issue 35): lateness p50/p99 of
 *                                      200 tasks due 100 ms–5 s ahead and of 200 retries after a 200 ms delay, and
 *                                      how long after its due time a burst of --tasks tasks due at once is all ready
 *   npm run bench -- --scenarios=workflow3
 *                                      3-step durable workflows per second at concurrency 50 (issue 33), effect-asynq's
 *                                      engine vs BullMQ's FlowProducer (a parent with 3 children), min(--tasks, 5,000)
 *                                      flows each, with Redis commands per flow and per step; not run for bee-queue
 *   npm run bench -- --rounds=3        each measurement 3 times (libraries interleaved), median per figure
 *   npm run bench -- --port=6388       pin the private server's port
 *   npm run bench -- --warmup=10000    the discarded warm-up of every scenario but latency, in tasks (default
 *                                      min(1,000, tasks/10); bulk enqueue min(10 calls, tasks/2)): a longer one
 *                                      measures V8's steady state
 *   npm run bench -- --baseline=DIR    also runs the effect-asynq of another checkout DIR (e.g. `git worktree add
 *                                      /tmp/base <commit>`) as "effect-asynq@base", interleaved with the others,
 *                                      and prints an A/B table (this tree ÷ base); both run this tree's harness
 *                                      (bench/), only the library (src/) comes from DIR
 *   npm run bench -- coldstart         the cold-start benchmark instead: fresh processes that import the library,
 *                                      enqueue one task and exit, beside bee-queue and BullMQ, bundled and
 *                                      unbundled (bench/coldstart/main.ts; --runs=N, --modes=bundled,unbundled)
 *   npm run bench -- --profile         also a CPU profile of each measured window (bench/results/profiles/),
 *                                      and a per-task CPU breakdown by area (Effect, ioredis, protobuf, …), for
 *                                      the payload-size scenarios also per KB of payload;
 *                                      the profiler costs CPU itself, so compare breakdowns with each other only
 *
 * The payload-size scenarios (enqueueSerial1k/10k/100k, enqueueBulk…, process100_1k/10k/100k) are
 * the same scenarios with each task carrying a body of 1 KB, 10 KB or 100 KB (a string field the
 * handler reads); a scenario moves at most 200 MB of payload, so at 100 KB it runs 2,000 tasks.
 *
 * Each (scenario, library) pair runs in its own fresh Node process (bench/child.ts) after a
 * discarded warm-up; the libraries take turns scenario by scenario (the starting library rotates)
 * so drift in machine load spreads over all of them. Between measurements Redis is emptied and
 * its statistics zeroed. Prints a table (each figure, effect-asynq ÷ peer, the issue's targets)
 * and writes everything to bench/results/<timestamp>.json.
 */
import { fork } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { dirname, relative, resolve as resolvePath, sep } from "node:path"
import { fileURLToPath } from "node:url"
import type { ChildJob, ChildReply, ScenarioName } from "./child.js"
import { libNames, type LibName } from "./libs/types.js"
import { areas, cpuBreakdown, type Profile } from "./cpuprofTop.js"
import { floorScenarios } from "./libs/roundTripFloor.js"
import { startBenchRedis } from "./redisServer.js"
import { buildRows, renderMarkdown, renderTable, type Results } from "./report.js"
import { bulkBatch, concurrentCallers } from "./scenarios.js"
import { bundleChild } from "./childBundle.js"
import { pairedRatios, roundsOf, summarizePairs } from "./pairedRounds.js"
import { median } from "./toolCli.js"

interface ScenarioSpec {
  readonly key: string
  readonly scenario: ScenarioName
  readonly concurrency: number
  readonly title: string
  /** Run only when named in --scenarios (not part of the default run, no target). */
  readonly optIn?: boolean
  /** The payload-size scenarios: each task carries a body of this many bytes (bench/scenarios.ts, payloadBody). */
  readonly payloadBytes?: number
}

/** The payload sizes of the payload-size scenarios (1 KB, 10 KB, 100 KB), by key suffix. */
const payloadSizes: ReadonlyArray<readonly [string, number]> = [
  ["1k", 1_000],
  ["10k", 10_000],
  ["100k", 100_000]
]
/**
 * A payload-size scenario moves at most this many payload bytes (tasks × size): at 100 KB, 2,000
 * tasks (200 MB in Redis at once when prefilled) instead of --tasks.
 */
const payloadBudgetBytes = 200_000_000
/**
 * The "workflow3" scenario runs at most this many flows (each is 4 tasks' worth of work for
 * BullMQ: a parent and 3 children): min(--tasks, 5,000), about 8 s per library at BullMQ's 600 flows/s.
 */
const flowBudget = 5_000
const payloadScenarios: ReadonlyArray<ScenarioSpec> = payloadSizes.flatMap(([suffix, bytes]) => [
  {
    key: `enqueueSerial${suffix}`,
    scenario: "enqueueSerial",
    concurrency: 1,
    title: `${suffix.toUpperCase()}B payload: enqueue one-by-one, awaited in turn`,
    payloadBytes: bytes
  },
  {
    key: `enqueueBulk${suffix}`,
    scenario: "enqueueBulk",
    concurrency: 1,
    title: `${suffix.toUpperCase()}B payload: enqueue bulk (batches of ${bulkBatch})`,
    payloadBytes: bytes
  },
  {
    key: `process100_${suffix}`,
    scenario: "process",
    concurrency: 100,
    title: `${suffix.toUpperCase()}B payload: processing, concurrency 100, handler reads it`,
    payloadBytes: bytes
  }
])

const scenarioList: ReadonlyArray<ScenarioSpec> = [
  { key: "enqueueSerial", scenario: "enqueueSerial", concurrency: 1, title: "enqueue one-by-one, awaited in turn" },
  {
    key: "enqueueConcurrent",
    scenario: "enqueueConcurrent",
    concurrency: concurrentCallers,
    title: `enqueue one-by-one, ${concurrentCallers} callers`
  },
  {
    key: "enqueueBulk",
    scenario: "enqueueBulk",
    concurrency: 1,
    title: `enqueue bulk (batches of ${bulkBatch}) + bytes per pending task`
  },
  { key: "process1", scenario: "process", concurrency: 1, title: "no-op processing, concurrency 1" },
  { key: "process10", scenario: "process", concurrency: 10, title: "no-op processing, concurrency 10" },
  { key: "process100", scenario: "process", concurrency: 100, title: "no-op processing, concurrency 100" },
  {
    key: "latency",
    scenario: "latency",
    concurrency: 10,
    title: "enqueue→handler latency at 500 tasks/s, concurrency 10"
  },
  {
    key: "scheduledLateness",
    scenario: "scheduledLateness",
    concurrency: 10,
    title: "scheduled lateness: delayed, 200 ms retries, a burst due at once"
  },
  {
    key: "workflow3",
    scenario: "workflow3",
    concurrency: 50,
    title: "3-step workflows (BullMQ: a flow of a parent and 3 children), c=50"
  },
  {
    key: "process10steady",
    scenario: "processSteady",
    concurrency: 10,
    title: "no-op processing, concurrency 10, one long-running worker",
    optIn: true
  },
  {
    key: "process100steady",
    scenario: "processSteady",
    concurrency: 100,
    title: "no-op processing, concurrency 100, one long-running worker",
    optIn: true
  },
  ...payloadScenarios
]

const arg = (name: string): string | undefined => {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
  if (hit === undefined) return undefined
  const i = hit.indexOf("=")
  return i < 0 ? "" : hit.slice(i + 1)
}

const parseList = <T extends string>(
  raw: string | undefined,
  allowed: ReadonlyArray<T>,
  what: string
): T[] | undefined => {
  if (raw === undefined) return undefined
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  for (const i of items)
    if (!allowed.includes(i as T)) throw new Error(`bench: unknown ${what} "${i}" (known: ${allowed.join(", ")})`)
  return items as T[]
}

const quick = arg("quick") !== undefined
const tasks = Number(arg("tasks") ?? (quick ? 2_000 : 20_000))
const latencyTasks = Number(arg("latency-tasks") ?? (quick ? 500 : 5_000))
const perSecond = 500
const libs = parseList(arg("only"), libNames, "library") ?? [...libNames]
const baseline = arg("baseline")
const scenarioKeys =
  parseList(
    arg("scenarios"),
    scenarioList.map((s) => s.key),
    "scenario"
  ) ?? scenarioList.filter((s) => !s.optIn).map((s) => s.key)
const port = arg("port") === undefined ? undefined : Number(arg("port"))
const rounds = Math.max(1, Number(arg("rounds") ?? 1))
/** Calls of bulk enqueue in its warm-up (at most half the scenario's tasks): see the warm-up below. */
const bulkWarmupCalls = 10
const warmupArg = arg("warmup")
const warmupTasks = warmupArg === undefined ? undefined : Number(warmupArg)
if (warmupTasks !== undefined && !(Number.isInteger(warmupTasks) && warmupTasks >= 0)) {
  console.error(`bench: --warmup must be a whole number of tasks ≥ 0, got ${warmupArg}`)
  process.exit(2)
}
const timeoutMs = 180_000
/**
 * The warm-up inside the worker of the "steady" scenarios: in 5,000-task slices, our worker at c=10
 * reached its steady rate after about 35,000 tasks (V8 optimizes code run once per batch late),
 * bee-queue's after 5,000. (--quick: 5,000, a sanity run.)
 */
const steadyWarmup = quick ? 5_000 : 50_000
const profile = arg("profile") !== undefined
const profileDir = fileURLToPath(new URL("./results/profiles/", import.meta.url))

/** The per-task µs of each area in a profile, as flat numeric fields ("cpu:<area>", "cpu:total") so rounds take medians. */
const breakdownFields = (file: string, tasks: number): Record<string, number> => {
  const b = cpuBreakdown(JSON.parse(readFileSync(file, "utf8")) as Profile)
  const out: Record<string, number> = { "cpu:total": Math.round((b.totalUs / tasks) * 10) / 10 }
  for (const a of areas) out[`cpu:${a}`] = Math.round((b.byArea[a] / tasks) * 10) / 10
  return out
}

/**
 * This tree's effect-asynq against the baseline's, per scenario: rate, Node and Redis CPU and
 * commands per task, the medians' ratio; with several rounds also the round-by-round ratios
 * (bench/pairedRounds.ts: their median and range, the rounds this tree was ahead in, and the sign
 * test's p: a p above ~0.1 is a difference the rounds' own noise makes as often).
 */
const renderAB = (results: Results): string => {
  const lines = [
    "| scenario | figure | this tree | base | ÷ base | paired ÷ (median, range) | this tree ahead | sign test p |",
    "|---|---|---:|---:|---:|---:|---:|---:|"
  ]
  const figures = ["perSecond", "nodeCpuUs", "redisCpuUs", "redisCalls", "p50Ms", "p99Ms"]
  for (const [scenario, byLib] of Object.entries(results)) {
    const a = (byLib as Record<string, unknown>)["effect-asynq"] as Record<string, unknown> | undefined
    const b = (byLib as Record<string, unknown>)[baseName] as Record<string, unknown> | undefined
    if (typeof a !== "object" || typeof b !== "object") continue
    for (const f of figures) {
      const x = a[f]
      const y = b[f]
      if (typeof x !== "number" || typeof y !== "number") continue
      const pairs = summarizePairs(pairedRatios(roundsOf(a), roundsOf(b), f), f === "perSecond")
      const paired =
        pairs === undefined || pairs.decided < 2
          ? "| | |"
          : `| ${pairs.median.toFixed(2)}× (${pairs.min.toFixed(2)}–${pairs.max.toFixed(2)}) | ${pairs.ahead} of ${pairs.decided} | ${pairs.p.toFixed(3)}`
      lines.push(`| ${scenario} | ${f} | ${x} | ${y} | ${(x / y).toFixed(2)}× ${paired} |`)
    }
  }
  return lines.join("\n")
}

/**
 * The breakdown table: one row per profiled (scenario, library), µs per task by area; for the
 * payload-size scenarios also per KB of payload (each area, the measured Node CPU and Redis CPU
 * divided by the payload's size in KB), so sizes compare: what grows with the bytes shows there.
 */
const renderBreakdown = (results: Results): string => {
  const lines = [
    `| scenario | library | ${areas.join(" | ")} | profiled total | measured Node CPU | Redis CPU |`,
    `|---|---|${areas.map(() => "---:").join("|")}|---:|---:|---:|`
  ]
  const cell = (v: number | undefined, kb: number | undefined) =>
    v === undefined ? "–" : kb === undefined ? v.toFixed(1) : `${v.toFixed(1)} (${(v / kb).toFixed(2)}/KB)`
  for (const [scenario, byLib] of Object.entries(results)) {
    for (const [lib, r] of Object.entries(byLib)) {
      if (typeof r !== "object" || r === null || !("cpu:total" in r)) continue
      const f = r as Record<string, number>
      const kb = typeof f.payloadBytes === "number" ? f.payloadBytes / 1000 : undefined
      const cells = [
        ...areas.map((a) => cell(f[`cpu:${a}`], kb)),
        cell(f["cpu:total"], kb),
        cell(f.nodeCpuUs, kb),
        cell(f.redisCpuUs, kb)
      ]
      lines.push(`| ${scenario} | ${lib} | ${cells.join(" | ")} |`)
    }
  }
  return lines.join("\n")
}

/** Per numeric field, the median over the rounds (other fields from the first round). */
const medianOf = (rs: ReadonlyArray<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...rs[0] }
  for (const k of Object.keys(out)) {
    if (typeof out[k] !== "number") continue
    out[k] = median(rs.map((r) => r[k] as number))
  }
  return out
}

/**
 * Children run as plain compiled JavaScript (esbuild bundle of bench/child.ts and the effect-asynq
 * sources it imports; packages stay external), not through tsx: BullMQ and bee-queue are measured as
 * the compiled JS they publish, so effect-asynq is measured the same way (as `npm run build` ships it),
 * without a TypeScript loader hook or source-map translation in the process.
 */
const buildChild = (fromDir?: string): Promise<string> =>
  bundleChild(
    fileURLToPath(new URL("./child.ts", import.meta.url)),
    fileURLToPath(
      new URL(fromDir === undefined ? "./results/.build/child.mjs" : "./results/.build/child-base.mjs", import.meta.url)
    ),
    fromDir === undefined ? [] : [libraryFrom(fromDir)]
  )

/**
 * An esbuild plugin for the baseline's child: this tree's harness (bench/), so both sides run the
 * same scenarios, with every import of the library (this tree's src/, adapters/) taken from the
 * checkout `dir` instead.
 */
/** The esbuild namespace of the stand-in for effect-asynq/workflow in a baseline checkout without it. */
const noWorkflows = "baseline-without-workflows"

const libraryFrom = (dir: string): import("esbuild").Plugin => {
  const here = fileURLToPath(new URL("../", import.meta.url))
  const there = resolvePath(dir) + sep
  return {
    name: "library-from-baseline",
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === "baseline" || !args.importer.startsWith(`${here}bench${sep}`)) return undefined
        const target = resolvePath(dirname(args.importer), args.path)
        if (target.startsWith(`${here}bench${sep}`)) return undefined
        const resolveDir = there + relative(here, dirname(args.importer))
        const r = await b.resolve(args.path, {
          resolveDir,
          kind: args.kind,
          importer: args.importer,
          pluginData: "baseline"
        })
        // A checkout from before effect-asynq/workflow: its "workflow3" fails, the other scenarios run.
        if (r.errors.length > 0 && /[\\/]src[\\/]workflow[\\/]/.test(target))
          return { path: target, namespace: noWorkflows }
        return r.errors.length > 0 ? { errors: r.errors } : { path: r.path }
      })
      b.onLoad({ filter: /.*/, namespace: noWorkflows }, () => ({
        contents: `export const layer = () => { throw new Error("the --baseline checkout has no effect-asynq/workflow") }`,
        loader: "js"
      }))
    }
  }
}
let childPath = ""
let baseChildPath = ""
/** The baseline's name in the results (its child runs effect-asynq from the --baseline checkout). */
const baseName = "effect-asynq@base"
type RunName = LibName | typeof baseName

/** The round-trip floor runs only the scenarios that are one round trip per task (bench/libs/roundTripFloor.ts). */
const runsScenario = (lib: RunName, scenario: ScenarioName): boolean =>
  scenario === "workflow3" ? flowLibs.has(lib) : lib !== "floor" || floorScenarios.has(scenario)

/** The libraries with workflows or flows ("workflow3"); bee-queue has neither, the floor is no library. */
const flowLibs: ReadonlySet<RunName> = new Set<RunName>(["effect-asynq", "bullmq", baseName])

const runChild = (job: ChildJob, path = childPath): Promise<ChildReply> =>
  new Promise((resolve) => {
    const child = fork(path, [JSON.stringify(job)], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] })
    let reply: ChildReply | undefined
    const killer = setTimeout(() => child.kill("SIGKILL"), job.timeoutMs + 60_000)
    child.on("message", (m) => (reply = m as ChildReply))
    child.on("exit", (code, signal) => {
      clearTimeout(killer)
      resolve(
        reply ?? { ok: false, pending: false, error: `child exited (code ${code}, signal ${signal}) without a result` }
      )
    })
  })

const main = async () => {
  childPath = await buildChild()
  if (baseline) baseChildPath = await buildChild(baseline)
  const names: ReadonlyArray<RunName> = baseline ? [...libs, baseName] : libs
  if (profile) mkdirSync(profileDir, { recursive: true })
  const redis = await startBenchRedis(port)
  const started = new Date()
  const results: Results = {}
  const settings: Partial<Record<LibName, string>> = {}
  const errors: Array<{ scenario: string; lib: LibName; error: string; pending: boolean }> = []
  console.log(
    `bench: redis ${redis.version} on ${redis.url} (private), ${tasks.toLocaleString("en-US")} tasks per scenario, ` +
      `latency over ${latencyTasks.toLocaleString("en-US")} tasks, ${rounds} round(s); libraries: ${libs.join(", ")}; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
  )
  try {
    const chosen = scenarioList.filter((s) => scenarioKeys.includes(s.key))
    for (const [si, spec] of chosen.entries()) {
      results[spec.key] = {}
      const runs: Partial<Record<RunName, Array<Record<string, unknown>>>> = {}
      const pendingLibs = new Set<RunName>()
      for (let round = 0; round < rounds; round++) {
        const order = names.map((_, i) => names[(i + si + round) % names.length]!)
        for (const lib of order) {
          if (pendingLibs.has(lib) || !runsScenario(lib, spec.scenario)) continue
          const n =
            spec.scenario === "latency"
              ? latencyTasks
              : spec.scenario === "workflow3"
                ? Math.min(tasks, flowBudget)
                : spec.payloadBytes === undefined
                  ? tasks
                  : Math.min(tasks, Math.floor(payloadBudgetBytes / spec.payloadBytes))
          // The latency warm-up runs 5 s at 500/s: at that rate V8 is still optimizing every library's hot
          // functions for seconds (its background compiles compete for the 2 cores), and a shorter warm-up
          // measures that rather than the steady state (see README, Benchmarks).
          // Bulk enqueue warms up in calls, as the others do: 1,000 tasks are one call of it, after which
          // V8 has optimized none of a library's bulk path (the measured calls would hold that).
          const warmup =
            spec.scenario === "latency"
              ? Math.min(2_500, Math.ceil(n / 2))
              : spec.scenario === "processSteady"
                ? (warmupTasks ?? steadyWarmup)
                : spec.scenario === "enqueueBulk"
                  ? (warmupTasks ?? Math.min(bulkWarmupCalls * bulkBatch, Math.ceil(n / 2)))
                  : (warmupTasks ?? Math.min(1_000, Math.ceil(n / 10)))
          const t0 = Date.now()
          const load1m = loadavg()[0]!
          const profileFile = profile ? `${profileDir}${spec.key}-${lib}-r${round + 1}.cpuprofile` : undefined
          const reply = await runChild(
            {
              lib: lib === baseName ? "effect-asynq" : lib,
              scenario: spec.scenario,
              redisUrl: redis.url,
              tasks: n,
              warmup,
              concurrency: spec.concurrency,
              perSecond,
              timeoutMs,
              ...(profileFile ? { profileFile } : {}),
              ...(spec.payloadBytes === undefined ? {} : { payloadBytes: spec.payloadBytes })
            },
            lib === baseName ? baseChildPath : childPath
          )
          const secs = ((Date.now() - t0) / 1000).toFixed(1)
          const tag = rounds > 1 ? ` (round ${round + 1}/${rounds})` : ""
          if (reply.ok) {
            ;(runs[lib] ??= []).push({
              ...(reply.result as Record<string, unknown>),
              ...(profileFile && existsSync(profileFile) ? breakdownFields(profileFile, n) : {}),
              ...(spec.payloadBytes === undefined ? {} : { payloadBytes: spec.payloadBytes }),
              loadAvg1mBefore: Math.round(load1m * 100) / 100
            })
            if (lib !== baseName) settings[lib] = reply.settings
            console.log(`  ${spec.title.padEnd(58)} ${lib.padEnd(13)} done in ${secs} s${tag}`)
          } else {
            errors.push({ scenario: spec.key, lib: lib as LibName, error: reply.error, pending: reply.pending })
            console.log(
              `  ${spec.title.padEnd(58)} ${lib.padEnd(13)} ${reply.pending ? "PENDING" : "FAILED"}: ${reply.error}${tag}`
            )
            if (reply.pending) pendingLibs.add(lib)
          }
        }
      }
      for (const lib of names) {
        if (!runsScenario(lib, spec.scenario)) continue
        const got = runs[lib]
        if (got && got.length > 0)
          (results[spec.key] as Record<string, unknown>)[lib] = rounds > 1 ? { ...medianOf(got), rounds: got } : got[0]
        else (results[spec.key] as Record<string, unknown>)[lib] = pendingLibs.has(lib) ? "pending" : "failed"
      }
    }
  } finally {
    await redis.stop()
  }

  const rows = buildRows(results, libs)
  console.log("")
  console.log(renderTable(rows, libs))
  console.log("\n↑ higher is better, ↓ lower is better; ÷ peer = effect-asynq's figure divided by the peer's.")
  if (baseline) {
    console.log(`\nA/B: effect-asynq (this tree) vs ${baseName} (${baseline}), interleaved in this run:`)
    console.log(renderAB(results))
  }
  if (profile) {
    console.log(
      `\nCPU per task by area (µs, self time in the profile of the measured window; profiles in ${profileDir}):`
    )
    console.log(renderBreakdown(results))
  }
  if (errors.length > 0)
    console.log(
      `\n${errors.length} measurement(s) missing: ${errors.map((e) => `${e.scenario}/${e.lib}${e.pending ? " (pending)" : ""}`).join(", ")}`
    )

  const out = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      totalMemBytes: totalmem(),
      node: process.version,
      loadAvgAtEnd: loadavg()
    },
    redis: { version: redis.version, private: true },
    parameters: {
      rounds,
      tasks,
      latencyTasks,
      latencyPerSecond: perSecond,
      bulkBatch,
      concurrentCallers,
      warmup: `${warmupTasks === undefined ? `min(1000, n/10) per scenario (bulk enqueue: min(${bulkWarmupCalls * bulkBatch}, n/2))` : `${warmupTasks} per scenario`} (latency: min(2500, n/2); the steady scenarios: ${warmupTasks ?? steadyWarmup} inside the measured worker), discarded`
    },
    libraries: libs,
    settings,
    results,
    errors,
    table: rows,
    markdown: renderMarkdown(rows, libs),
    ...(baseline ? { baseline, abMarkdown: renderAB(results) } : {}),
    ...(profile ? { cpuBreakdownMarkdown: renderBreakdown(results) } : {})
  }
  const dir = fileURLToPath(new URL("./results/", import.meta.url))
  mkdirSync(dir, { recursive: true })
  const file = `${dir}${started.toISOString().replace(/[:.]/g, "-")}.json`
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`)
  console.log(`\nresults: ${file}`)
}

// `npm run bench -- coldstart [--runs=N] [--modes=bundled,unbundled]`: the cold-start benchmark instead (bench/coldstart/main.ts).
const run =
  process.argv[2] === "coldstart"
    ? () => import("./coldstart/main.js").then((m) => m.runColdstart(process.argv.slice(3)))
    : main
run().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
