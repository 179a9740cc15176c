/**
 * `npm run chaos` — the fault-tolerance suite (issue 13): every fault of the issue reproduced on
 * loopback, against redis-server processes and a 3-master + 3-replica Redis Cluster this run starts
 * itself (test/support helpers), with what must hold. Prints a table (fault, figure, expectation,
 * result) as text and as Markdown (the README's), and exits 1 when a row fails. Bounded: each
 * scenario has its own time limit; the whole run takes a few minutes.
 *
 *   npm run chaos                        every scenario
 *   npm run chaos -- --only=storm,kills  some (storm, kills, lostreply, broken, restart, failover)
 */
import { brokenQueue } from "./brokenQueue.js"
import { clusterFailover } from "./clusterFailover.js"
import { clusterRestart } from "./clusterRestart.js"
import { enqueueStorm } from "./enqueueStorm.js"
import { lostReplies } from "./lostReplies.js"
import { renderMarkdown, renderText, type ChaosRow } from "./report.js"
import { stopAll, within } from "./support.js"
import { workerKills } from "./workerKills.js"

const scenarios: ReadonlyArray<{
  readonly key: string
  readonly fault: string
  readonly limitMs: number
  readonly run: () => Promise<ReadonlyArray<ChaosRow>>
}> = [
  { key: "storm", fault: "enqueue under CLIENT KILL storms", limitMs: 60_000, run: () => enqueueStorm(8000) },
  { key: "lostreply", fault: "lost replies (proxy)", limitMs: 60_000, run: lostReplies },
  { key: "kills", fault: "worker SIGKILL x3 and connection kills", limitMs: 150_000, run: workerKills },
  { key: "broken", fault: "a broken queue", limitMs: 60_000, run: brokenQueue },
  { key: "restart", fault: "every cluster node restarts", limitMs: 120_000, run: clusterRestart },
  { key: "failover", fault: "a cluster failover", limitMs: 150_000, run: clusterFailover }
]

const only = process.argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",")

const main = async () => {
  const rows: Array<ChaosRow> = []
  for (const s of scenarios) {
    if (only && !only.includes(s.key)) continue
    const t0 = performance.now()
    process.stdout.write(`chaos: ${s.fault} …\n`)
    try {
      rows.push(...(await within(s.fault, s.limitMs, s.run())))
    } catch (e) {
      rows.push({
        fault: s.fault,
        figure: `did not finish: ${e instanceof Error ? e.message : String(e)}`,
        expectation: "finishes within its time limit",
        pass: false
      })
    }
    process.stdout.write(`chaos: ${s.fault} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  }
  process.stdout.write(`\n${renderText(rows)}\n\n${renderMarkdown(rows)}\n`)
  const failed = rows.filter((r) => !r.pass).length
  process.stdout.write(
    failed === 0 ? `\nall ${rows.length} checks passed\n` : `\n${failed} of ${rows.length} checks FAILED\n`
  )
  await stopAll()
  process.exit(failed === 0 ? 0 : 1)
}

void main()
