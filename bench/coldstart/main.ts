/**
 * Cold start of an enqueue-only function: a fresh Node process imports the library, connects,
 * enqueues one task and closes, against a private redis-server (started here, stopped at the end).
 * Side by side in one run, the runs interleaved round by round so a change in the machine's load
 * weighs on every row alike (the first round is discarded: it warms the disk cache):
 *
 *   node            an empty module: Node's own start, the floor under every row
 *   effect-asynq    createClient(...).enqueue(...), close (the Promise client, `effect-asynq/client`)
 *   effect-asynq λ  the enqueue-only Lambda handler (`effect-asynq/aws-lambda/enqueueHandler`)
 *   bee-queue       a producer-only Queue: createJob().save(), close
 *   bullmq          Queue.add, close
 *
 * Two ways to ship the function, each measured:
 *   bundled    one esbuild bundle per entry (platform node, ESM, minified), as a Lambda zip holds;
 *              effect-asynq's bundles get no banner (they must load as plain ESM), the CommonJS
 *              libraries get the usual createRequire banner they need
 *   unbundled  the sources compiled file by file (what `npm run build` ships, packages resolved
 *              from node_modules), as a function deployed with its node_modules runs
 *
 * Figures (medians): bundle size (and gzip), import, connect+enqueue+close, process start → done,
 * and wall time from spawn to exit; then effect-asynq's spawn → exit over bee-queue's and BullMQ's.
 * Results are also written to bench/results/coldstart-<time>.json.
 *
 *   npx tsx bench/coldstart/main.ts [--runs=15] [--modes=bundled,unbundled]
 *   npm run bench -- coldstart [--runs=15] [--modes=unbundled]
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"
import { startBenchRedis } from "../redisServer.js"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = join(here, "../..")
/** Inside the repository, so the unbundled files resolve their packages from its node_modules. */
const out = join(root, "bench/results/.build/coldstart")

const modes = ["bundled", "unbundled"] as const
type Mode = (typeof modes)[number]

interface Entry {
  readonly name: string
  /** File under entries/, without .ts. */
  readonly file: string
  /** The createRequire banner CommonJS dependencies need in an ESM bundle (never for effect-asynq's: it must load without one). */
  readonly banner: boolean
  /** Files read at run time next to the code (bee-queue's Lua scripts). */
  readonly luaDir?: string
}

const entries: ReadonlyArray<Entry> = [
  { name: "node", file: "node", banner: false },
  { name: "effect-asynq", file: "effect-asynq-client", banner: false },
  { name: "effect-asynq λ", file: "effect-asynq-lambda", banner: false },
  { name: "bee-queue", file: "bee-queue", banner: true, luaDir: join(root, "node_modules/bee-queue/lib/lua") },
  { name: "bullmq", file: "bullmq", banner: true }
]

const cjsBanner =
  "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);"

/** One bundle per entry: its file, and the bytes of the files shipped beside it. */
const bundle = async (e: Entry): Promise<{ file: string; bytes: number; gzipBytes: number; extraBytes: number }> => {
  const dir = join(out, "bundled", e.file)
  const file = join(dir, "index.mjs")
  await build({
    entryPoints: [join(here, "entries", `${e.file}.ts`)],
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: file,
    logLevel: "error",
    ...(e.banner ? { banner: { js: cjsBanner } } : {})
  })
  let extraBytes = 0
  if (e.luaDir !== undefined) {
    for (const f of readdirSync(e.luaDir).filter((f) => f.endsWith(".lua"))) {
      copyFileSync(join(e.luaDir, f), join(dir, f))
      extraBytes += statSync(join(e.luaDir, f)).size
    }
  }
  const text = readFileSync(file)
  return { file, bytes: text.length, gzipBytes: gzipSync(text).length, extraBytes }
}

/** The TypeScript files under `dir` (recursively). */
const tsFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? tsFiles(join(dir, d.name))
      : d.name.endsWith(".ts") && !d.name.endsWith(".d.ts")
        ? [join(dir, d.name)]
        : []
  )

/** The sources compiled file by file (no bundling), the repository's layout kept: the entries' files. */
const compileUnbundled = async (): Promise<Map<string, string>> => {
  const dir = join(out, "unbundled")
  rmSync(dir, { recursive: true, force: true })
  const sources = [...tsFiles(join(root, "src")), ...tsFiles(join(root, "adapters")), ...tsFiles(join(here, "entries"))]
  await build({
    entryPoints: sources,
    outdir: dir,
    outbase: root,
    bundle: false,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error"
  })
  return new Map(entries.map((e) => [e.name, join(dir, "bench/coldstart/entries", `${e.file}.js`)]))
}

interface Sample {
  readonly importMs: number
  readonly runMs: number
  readonly totalMs: number
  readonly wallMs: number
}

/** One cold start of `file` in a fresh Node process (bench/coldstart/runner.mjs). */
const coldRun = (name: string, file: string, redisUrl: string): Sample => {
  const start = process.hrtime.bigint()
  let line: string
  try {
    line = execFileSync(process.execPath, [join(here, "runner.mjs"), file], {
      env: { ...process.env, REDIS_URL: redisUrl },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    })
  } catch (e) {
    const stderr = String((e as { stderr?: unknown }).stderr ?? e)
    // The error's own lines (not a minified bundle's source line, which Node prints above them).
    const lines = stderr.split("\n").filter((l) => l.length < 400 && /Error|^\s+at /.test(l))
    throw new Error(`${name} cold run failed: ${lines.slice(0, 3).join(" | ")}`)
  }
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6
  return { ...(JSON.parse(line.trim().split("\n").pop()!) as Omit<Sample, "wallMs">), wallMs }
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

interface Row {
  readonly mode: Mode
  readonly library: string
  readonly bundleBytes?: number
  readonly gzipBytes?: number
  readonly extraBytes?: number
  readonly importMs: number
  readonly runMs: number
  readonly processMs: number
  readonly wallMs: number
}

const kb = (n: number | undefined) => (n === undefined ? "-" : `${(n / 1024).toFixed(1)} KB`)
const ms = (n: number) => `${n.toFixed(0)} ms`
const ratio = (a: Row, b: Row | undefined) => (b === undefined ? "-" : `${(a.wallMs / b.wallMs).toFixed(2)}×`)

const table = (rows: ReadonlyArray<Row>): string => {
  const bee = rows.find((r) => r.library === "bee-queue")
  const bull = rows.find((r) => r.library === "bullmq")
  const lines = [
    "| library | bundle (min) | gzip | import | connect+enqueue+close | process start → done | spawn → exit | ÷ bee-queue | ÷ BullMQ |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const r of rows) {
    const extra = r.extraBytes ? ` (+${kb(r.extraBytes)} .lua)` : ""
    lines.push(
      `| ${r.library} | ${kb(r.bundleBytes)}${extra} | ${kb(r.gzipBytes)} | ${ms(r.importMs)} | ${ms(r.runMs)} | ${ms(r.processMs)} | ${ms(r.wallMs)} | ${ratio(r, bee)} | ${ratio(r, bull)} |`
    )
  }
  return lines.join("\n")
}

const arg = (args: ReadonlyArray<string>, name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)

/** Runs the cold-start benchmark with `args` (see the module comment); prints the tables. */
export const runColdstart = async (args: ReadonlyArray<string>): Promise<void> => {
  const runs = Number(arg(args, "runs") ?? 15)
  if (!(Number.isInteger(runs) && runs >= 1))
    throw new Error(`coldstart: --runs must be a whole number ≥ 1, got ${arg(args, "runs")}`)
  const chosen = (arg(args, "modes")?.split(",") ?? [...modes]) as Array<Mode>
  for (const m of chosen)
    if (!modes.includes(m)) throw new Error(`coldstart: unknown mode "${m}" (known: ${modes.join(", ")})`)
  mkdirSync(out, { recursive: true })
  const files = new Map<Mode, Map<string, string>>()
  const sizes = new Map<string, { bytes: number; gzipBytes: number; extraBytes: number }>()
  if (chosen.includes("bundled")) {
    const m = new Map<string, string>()
    for (const e of entries) {
      const b = await bundle(e)
      m.set(e.name, b.file)
      sizes.set(e.name, b)
    }
    files.set("bundled", m)
  }
  if (chosen.includes("unbundled")) files.set("unbundled", await compileUnbundled())

  const redis = await startBenchRedis()
  const samples = new Map<string, Array<Sample>>()
  // A row whose process fails (e.g. a bundle that does not load) is reported, not measured further.
  const failed = new Map<string, string>()
  const started = new Date()
  try {
    console.log(
      `coldstart: ${runs} runs per row (after one discarded round), node ${process.version}, redis ${redis.version} (private, ${redis.url}), load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
    )
    for (let round = 0; round <= runs; round++)
      for (const mode of chosen)
        for (const e of entries) {
          const key = `${mode}/${e.name}`
          if (failed.has(key)) continue
          try {
            const s = coldRun(`${e.name} (${mode})`, files.get(mode)!.get(e.name)!, redis.url)
            if (round > 0) samples.set(key, [...(samples.get(key) ?? []), s])
          } catch (err) {
            failed.set(key, err instanceof Error ? err.message : String(err))
            console.log(`  FAILED ${key}: ${failed.get(key)}`)
          }
        }
  } finally {
    await redis.stop()
  }

  const rows: Array<Row> = chosen.flatMap((mode) =>
    entries.flatMap((e) => {
      const xs = samples.get(`${mode}/${e.name}`)
      if (xs === undefined) return []
      const size = mode === "bundled" ? sizes.get(e.name) : undefined
      return {
        mode,
        library: e.name,
        ...(size ? { bundleBytes: size.bytes, gzipBytes: size.gzipBytes, extraBytes: size.extraBytes } : {}),
        importMs: median(xs.map((s) => s.importMs)),
        runMs: median(xs.map((s) => s.runMs)),
        processMs: median(xs.map((s) => s.totalMs)),
        wallMs: median(xs.map((s) => s.wallMs))
      }
    })
  )
  for (const [key, message] of failed) console.log(`\n${key} did not run: ${message}`)
  const markdown: Record<string, string> = {}
  for (const mode of chosen) {
    markdown[mode] = table(rows.filter((r) => r.mode === mode))
    console.log(`\n${mode}:\n${markdown[mode]}`)
  }
  const pick = (mode: Mode, library: string) => rows.find((r) => r.mode === mode && r.library === library)
  const client = pick("bundled", "effect-asynq")
  if (client?.bundleBytes !== undefined)
    console.log(
      `\neffect-asynq createClient bundle: ${kb(client.bundleBytes)} (target ≤ 150 KB: ${client.bundleBytes <= 150 * 1024 ? "met" : "NOT met"}), loads as ESM without a banner`
    )
  const ours = pick("unbundled", "effect-asynq")
  const bee = pick("unbundled", "bee-queue")
  if (ours && bee)
    console.log(
      `effect-asynq unbundled spawn → exit: ${(ours.wallMs / bee.wallMs).toFixed(2)}× bee-queue's (target ≤ 1.2×: ${ours.wallMs <= 1.2 * bee.wallMs ? "met" : "NOT met"})`
    )

  const resultsDir = join(root, "bench/results")
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `coldstart-${started.toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(
    file,
    `${JSON.stringify({ startedAt: started.toISOString(), runs, node: process.version, cpus: cpus().length, loadAvgAtEnd: loadavg(), rows, failed: Object.fromEntries(failed), markdown, samples: Object.fromEntries(samples) }, null, 2)}\n`
  )
  console.log(`\nresults: ${file}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  runColdstart(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e)
    process.exitCode = 1
  })
}
