/**
 * Summarises a V8 .cpuprofile: self time per area (Effect runtime, ioredis, protobuf, our code, GC,
 * Node internals, other), per function, and optionally inclusive time. `npm run bench -- --profile`
 * uses `cpuBreakdown` to print a per-task CPU breakdown of each profiled measurement; as a CLI it
 * is a development aid for reading one profile:
 *
 *   npx tsx bench/cpuprofTop.ts bench/results/profiles/<file>.cpuprofile [N] [--inclusive]
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
export interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
}

/** The areas of the breakdown, in the order they are printed. */
export const areas = ["effect", "ioredis", "protobuf", "our code", "gc", "node", "other"] as const
export type Area = (typeof areas)[number]

/** Packages ioredis is made of (its own code and the parsers/queues it depends on). */
const ioredisPackages = new Set([
  "ioredis",
  "redis-parser",
  "redis-errors",
  "denque",
  "cluster-key-slot",
  "standard-as-callback",
  "@ioredis/commands",
  "lodash.defaults",
  "lodash.isarguments",
  "debug"
])

const packageOf = (url: string): string | undefined => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]

/**
 * The area a frame's time counts to. "our code" is the library measured: for effect-asynq its
 * sources (bundled into the bench child), for a peer its own package(s); the small bench harness
 * is in the bundle too.
 */
export const areaOf = (functionName: string, url: string): Area => {
  if (functionName === "(garbage collector)") return "gc"
  if (url === "") return "other"
  if (url.startsWith("node:")) return "node"
  const pkg = packageOf(url)
  if (pkg === undefined) return "our code"
  if (pkg === "effect" || pkg.startsWith("@effect/")) return "effect"
  if (ioredisPackages.has(pkg)) return "ioredis"
  if (pkg === "@bufbuild/protobuf") return "protobuf"
  // a peer library's own code (bullmq, bee-queue and what they bring: msgpackr, uuid, …)
  return "our code"
}

const selfTimes = (p: Profile): Map<number, number> => {
  const selfUs = new Map<number, number>()
  p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
  return selfUs
}
const idle = (name: string) => name === "(idle)" || name === "(program)"

/** The nodes under the bench's own profiler calls (starting/stopping the profile is not the library's work). */
const harnessNodes = (p: Profile): Set<number> => {
  const out = new Set<number>()
  const mark = (n: Node, under: boolean) => {
    const here = under || n.callFrame.functionName.startsWith("measuredWindow.")
    if (here) out.add(n.id)
    for (const c of n.children ?? []) mark(byIdOf(p).get(c)!, here)
  }
  mark(p.nodes[0]!, false)
  return out
}
const byIdCache = new WeakMap<Profile, Map<number, Node>>()
const byIdOf = (p: Profile) => {
  let m = byIdCache.get(p)
  if (!m) byIdCache.set(p, (m = new Map(p.nodes.map((n) => [n.id, n]))))
  return m
}

/** Busy self time per area, in µs (idle, "(program)" and the profiler's own start/stop left out). */
export const cpuBreakdown = (p: Profile): { readonly totalUs: number; readonly byArea: Record<Area, number> } => {
  const byId = byIdOf(p)
  const harness = harnessNodes(p)
  const byArea = Object.fromEntries(areas.map((a) => [a, 0])) as Record<Area, number>
  let totalUs = 0
  for (const [id, us] of selfTimes(p)) {
    const n = byId.get(id)!
    if (idle(n.callFrame.functionName) || harness.has(id)) continue
    totalUs += us
    byArea[areaOf(n.callFrame.functionName, n.callFrame.url)] += us
  }
  return { totalUs, byArea }
}

const main = () => {
  const file = process.argv[2]
  if (!file) throw new Error("usage: cpuprofTop <file.cpuprofile> [N] [--inclusive]")
  const top = Number(process.argv.find((a, i) => i > 2 && /^\d+$/.test(a)) ?? 25)
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const selfUs = selfTimes(p)
  const shortUrl = (url: string) =>
    url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*\/bench\/results\/\.build\//, "")
  const label = (n: Node) =>
    `${n.callFrame.functionName || "(anonymous)"}  ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
  const fnAgg = new Map<string, number>()
  const areaAgg = new Map<string, number>()
  let total = 0
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!
    if (idle(n.callFrame.functionName)) continue
    total += us
    const key = label(n)
    fnAgg.set(key, (fnAgg.get(key) ?? 0) + us)
    const a = areaOf(n.callFrame.functionName, n.callFrame.url)
    areaAgg.set(a, (areaAgg.get(a) ?? 0) + us)
  }
  const show = (m: Map<string, number>, title: string) => {
    console.log(`\n${title} (busy total ${(total / 1000).toFixed(0)} ms)`)
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`)
  }
  show(areaAgg, "self time by area")
  show(fnAgg, "self time by function")
  if (process.argv.includes("--inclusive")) {
    // inclusive time: every function on the stack of a sample gets the sample's time once
    const parent = new Map<number, number>()
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
    const incl = new Map<string, number>()
    for (const [id, us] of selfUs) {
      if (idle(byId.get(id)!.callFrame.functionName)) continue
      const seen = new Set<string>()
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const l = label(byId.get(cur)!)
        if (seen.has(l)) continue
        seen.add(l)
        incl.set(l, (incl.get(l) ?? 0) + us)
      }
    }
    show(incl, "inclusive time by function")
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()
