/**
 * A Redis Cluster failover: the master of one of three queues is SIGKILLed; its replica takes over
 * after cluster-node-timeout (5 s, Redis's default) and the election. One Server serves the three
 * queues (one per master). Figure: the completion rate of the two queues on healthy masters while
 * the failover lasts (from the kill until the failed queue completes tasks again), against their
 * rate in the seconds before the kill.
 */
import { createClient } from "../../src/client.js"
import { startServer } from "../../test/processor/support.js"
import { queuePerMaster, startChaosCluster } from "./cluster.js"
import type { ChaosRow } from "./report.js"
import { fmt, sleep } from "./support.js"

const perQueue = 8000
const workMs = 10
const baselineMs = 4000

export const clusterFailover = async (): Promise<ReadonlyArray<ChaosRow>> => {
  const cluster = await startChaosCluster()
  const placed = await queuePerMaster(cluster, "fo")
  const [h1, h2, failing] = placed as [(typeof placed)[0], (typeof placed)[0], (typeof placed)[0]]
  const done = new Map<string, number>(placed.map((p) => [p.queue, 0]))
  const client = createClient({ cluster: cluster.nodes })
  try {
    for (const { queue } of placed)
      for (let i = 0; i < perQueue; i += 1000)
        await client.enqueueMany(
          Array.from({ length: 1000 }, (_, j) => ({ type: "work", payload: { i: i + j }, options: { queue } }))
        )
  } finally {
    await client.close()
  }
  const srv = await startServer(
    async () => {
      await sleep(workMs)
    },
    {
      queues: Object.fromEntries(placed.map((p) => [p.queue, 1])),
      concurrency: 10,
      shutdownTimeoutMs: 1000,
      onSettled: (msg, outcome) => {
        if (outcome === "completed") done.set(msg.queue, done.get(msg.queue)! + 1)
      }
    },
    { cluster: cluster.nodes }
  )
  const healthyDone = () => done.get(h1.queue)! + done.get(h2.queue)!
  let baselineRate = 0
  let failoverRate = 0
  let failoverMs: number | undefined
  try {
    await sleep(2000)
    const b0 = healthyDone()
    await sleep(baselineMs)
    baselineRate = (healthyDone() - b0) / (baselineMs / 1000)
    const f0 = healthyDone()
    const failingBefore = done.get(failing.queue)!
    const t0 = performance.now()
    await cluster.killNode(failing.port)
    // The failover is over once the failed master's queue completes tasks again (its replica took over).
    let lastFailing = failingBefore
    await sleep(500)
    lastFailing = done.get(failing.queue)!
    while (performance.now() - t0 < 60_000) {
      await sleep(100)
      const now = done.get(failing.queue)!
      if (now > lastFailing + 5) {
        failoverMs = performance.now() - t0
        break
      }
      lastFailing = now
    }
    const elapsed = performance.now() - t0
    failoverRate = (healthyDone() - f0) / (elapsed / 1000)
  } finally {
    await srv.shutdown()
    await cluster.stop()
  }
  const ratio = baselineRate > 0 ? failoverRate / baselineRate : 0
  return [
    {
      fault: "Redis Cluster failover (3+3, one master SIGKILLed, node timeout 5 s)",
      figure: `failover took ${failoverMs === undefined ? "over 60 s" : `${fmt(failoverMs / 1000, 1)} s`}; healthy queues ${fmt(failoverRate)}/s during it vs ${fmt(baselineRate)}/s before (${fmt(ratio * 100)} %)`,
      expectation: "healthy queues ≥ 50 % of their rate during the failover; the failed queue resumes",
      pass: failoverMs !== undefined && ratio >= 0.5
    }
  ]
}
