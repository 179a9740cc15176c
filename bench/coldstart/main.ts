/**
 * Cold-start benchmark of an enqueue-only function: effect-asynq's Lambda enqueue handler beside
 * BullMQ's and bee-queue's equivalents. For each: esbuild-minified bundle size (and gzip), then
 * N fresh Node processes that import the bundle, connect, enqueue one task and close (the runs of
 * the three libraries interleaved, round by round).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/coldstart/main.ts [runs=9]
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = join(here, "../..")
const runs = Number(process.argv[2] ?? 9)
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const out = mkdtempSync(join(tmpdir(), "coldstart-"))

interface Row {
  readonly library: string
  readonly bundleBytes: number
  readonly gzipBytes: number
  readonly extraFilesBytes: number
  readonly importMsMedian: number
  readonly runMsMedian: number
  readonly processMsMedian: number
  readonly wallMsMedian: number
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

const bundle = async (name: string): Promise<{ file: string; extra: number }> => {
  const dir = join(out, name)
  const file = join(dir, "index.mjs")
  await build({
    entryPoints: [join(here, "entries", `${name}.ts`)],
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: file,
    logLevel: "error",
    // CJS dependencies call require() for Node built-ins and read __dirname: give the ESM bundle both.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);"
    }
  })
  let extra = 0
  if (name === "bee-queue") {
    // bee-queue reads its Lua scripts from files next to its code at run time: ship them.
    const lua = join(root, "node_modules/bee-queue/lib/lua")
    for (const f of readdirSync(lua).filter((f) => f.endsWith(".lua"))) {
      copyFileSync(join(lua, f), join(dir, f))
      extra += statSync(join(lua, f)).size
    }
  }
  return { file, extra }
}

type Sample = { importMs: number; runMs: number; totalMs: number; wallMs: number }

/** One cold start of `file` in a fresh Node process. */
const coldRun = (library: string, file: string): Sample => {
  const start = process.hrtime.bigint()
  let line: string
  try {
    line = execFileSync(process.execPath, [join(here, "runner.mjs"), file], { env: { ...process.env, REDIS_URL: redisUrl }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch (e) {
    const stderr = String((e as { stderr?: unknown }).stderr ?? e)
    throw new Error(`${library} cold run failed: ${stderr.split("\n").filter((l) => /Error|at /.test(l)).slice(0, 4).join(" | ").slice(0, 600)}`)
  }
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6
  return { ...JSON.parse(line.trim().split("\n").pop()!), wallMs }
}

const libraries = ["effect-asynq", "bee-queue", "bullmq"]
const bundles = new Map<string, { file: string; extra: number }>()
for (const lib of libraries) bundles.set(lib, await bundle(lib))
// The runs are interleaved (one of each library per round), so a change in the machine's load
// during the benchmark weighs on every library alike; the first round warms the disk cache.
const samples = new Map<string, Array<Sample>>(libraries.map((l) => [l, []]))
for (let i = 0; i < runs + 1; i++)
  for (const lib of libraries) {
    const s = coldRun(lib, bundles.get(lib)!.file)
    if (i > 0) samples.get(lib)!.push(s)
  }

const rows: Array<Row> = libraries.map((library) => {
  const { file, extra } = bundles.get(library)!
  const bytes = readFileSync(file)
  const xs = samples.get(library)!
  return {
    library,
    bundleBytes: bytes.length,
    gzipBytes: gzipSync(bytes).length,
    extraFilesBytes: extra,
    importMsMedian: median(xs.map((s) => s.importMs)),
    runMsMedian: median(xs.map((s) => s.runMs)),
    processMsMedian: median(xs.map((s) => s.totalMs)),
    wallMsMedian: median(xs.map((s) => s.wallMs))
  }
})

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`
const ms = (n: number) => `${n.toFixed(0)} ms`
console.log(`cold start of an enqueue-only function: ${runs} fresh processes each, median; node ${process.version}; ${redisUrl}`)
console.log("| library | bundle (min) | gzip | extra files | import | connect+enqueue+close | process start → done | wall (spawn → exit) |")
console.log("|---|---|---|---|---|---|---|---|")
for (const r of rows)
  console.log(`| ${r.library} | ${kb(r.bundleBytes)} | ${kb(r.gzipBytes)} | ${r.extraFilesBytes ? kb(r.extraFilesBytes) : "-"} | ${ms(r.importMsMedian)} | ${ms(r.runMsMedian)} | ${ms(r.processMsMedian)} | ${ms(r.wallMsMedian)} |`)
const ours = rows[0]!
const bee = rows.find((r) => r.library === "bee-queue")!
console.log(
  `effect-asynq bundle ${kb(ours.bundleBytes)} (target <= 300 KB: ${ours.bundleBytes <= 300 * 1024 ? "met" : "NOT met"}); ` +
    `cold start (spawn → exit) ${(ours.wallMsMedian / bee.wallMsMedian).toFixed(2)}x bee-queue's (target <= 1.1x: ${ours.wallMsMedian <= 1.1 * bee.wallMsMedian ? "met" : "NOT met"})`
)
console.log(JSON.stringify({ runs, node: process.version, rows }))
