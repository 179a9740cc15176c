/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function and per package
 * (node_modules/<pkg>, src/…, node:internal), top N. A development aid for reading bench profiles:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/child.ts '<ChildJob JSON>'
 *   npx tsx bench/cpuprofTop.ts /tmp/prof/CPU.*.cpuprofile [N] [--inclusive]
 */
import { readFileSync } from "node:fs"

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
}

const file = process.argv[2]
if (!file) throw new Error("usage: cpuprofTop <file.cpuprofile> [N]")
const top = Number(process.argv.find((a, i) => i > 2 && /^\d+$/.test(a)) ?? 25)
const p = JSON.parse(readFileSync(file, "utf8")) as Profile
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const selfUs = new Map<number, number>()
p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))

const area = (url: string): string => {
  if (url === "") return "(native/gc/idle)"
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (nm) return nm[1]!
  if (url.startsWith("node:")) return url.split("/")[0]!
  const m = /\/work\/main\/([^/]+\/[^/]+)/.exec(url)
  return m ? m[1]! : url
}
const fnAgg = new Map<string, number>()
const areaAgg = new Map<string, number>()
let total = 0
for (const [id, us] of selfUs) {
  const n = byId.get(id)!
  const name = n.callFrame.functionName || "(anonymous)"
  if (name === "(idle)" || name === "(program)") continue
  total += us
  const key = `${name}  ${n.callFrame.url.replace(/^.*\/work\/main\//, "")}:${n.callFrame.lineNumber + 1}`
  fnAgg.set(key, (fnAgg.get(key) ?? 0) + us)
  const a = name === "(garbage collector)" ? "(gc)" : area(n.callFrame.url)
  areaAgg.set(a, (areaAgg.get(a) ?? 0) + us)
}
const show = (m: Map<string, number>, title: string) => {
  console.log(`\n${title} (busy total ${(total / 1000).toFixed(0)} ms)`)
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`)
}
// inclusive time: every function on the stack of a sample gets the sample's time once
const parent = new Map<number, number>()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = (n: Node) => `${n.callFrame.functionName || "(anonymous)"}  ${n.callFrame.url.replace(/^.*\/work\/main\//, "")}:${n.callFrame.lineNumber + 1}`
const incl = new Map<string, number>()
for (const [id, us] of selfUs) {
  const leaf = byId.get(id)!
  if (leaf.callFrame.functionName === "(idle)" || leaf.callFrame.functionName === "(program)") continue
  const seen = new Set<string>()
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!)
    if (seen.has(l)) continue
    seen.add(l)
    incl.set(l, (incl.get(l) ?? 0) + us)
  }
}
show(areaAgg, "self time by area")
show(fnAgg, "self time by function")
if (process.argv.includes("--inclusive")) show(incl, "inclusive time by function")
