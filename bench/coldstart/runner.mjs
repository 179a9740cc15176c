// Runs one cold start in this fresh process: import the bundle, enqueue one task, close.
// Prints { importMs, runMs, totalMs } where totalMs counts from process start.
import { performance } from "node:perf_hooks"
const t0 = performance.now()
const mod = await import(process.argv[2])
const t1 = performance.now()
await mod.coldRun()
const t2 = performance.now()
console.log(JSON.stringify({ importMs: t1 - t0, runMs: t2 - t1, totalMs: t2 }))
