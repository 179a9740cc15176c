/**
 * Every node of a 3-master + 3-replica Redis Cluster killed at once for 3 s, then started again
 * (same ports, same nodes.conf): a running Server and a client (createClient) must work again on
 * their own. Figure: from the restart (every node answers PING) to the first task enqueued after
 * it being processed, over two rounds.
 */
import { createClient } from "../../src/client.js"
import { startServer } from "../../test/processor/support.js"
import { startChaosCluster } from "./cluster.js"
import type { ChaosRow } from "./report.js"
import { fmt, sleep } from "./support.js"

const limitMs = 10_000

export const clusterRestart = async (): Promise<ReadonlyArray<ChaosRow>> => {
  const cluster = await startChaosCluster()
  const processed = new Set<string>()
  const srv = await startServer(
    async (task) => void processed.add(task.id),
    { queues: { restart: 1 }, concurrency: 2, shutdownTimeoutMs: 1000 },
    { cluster: cluster.nodes }
  )
  const client = createClient({ cluster: cluster.nodes })
  const times: Array<number | undefined> = []
  try {
    const first = await client.enqueue("ping", null, { queue: "restart" })
    while (!processed.has(first.id)) await sleep(20)
    for (let round = 0; round < 2; round++) {
      await cluster.killAll()
      await sleep(3000)
      await cluster.restartAll()
      const t0 = performance.now()
      // Probe: enqueue (retrying while the cluster settles) until a task enqueued after the restart is processed.
      let seen: number | undefined
      const probes: Array<string> = []
      while (seen === undefined && performance.now() - t0 < 3 * limitMs) {
        const probe = client.enqueue("ping", { round }, { queue: "restart" }).then(
          (info) => void probes.push(info.id),
          () => {}
        )
        await Promise.race([probe, sleep(250)])
        if (probes.some((id) => processed.has(id))) seen = performance.now() - t0
      }
      times.push(seen)
    }
  } finally {
    await srv.shutdown()
    await client.close()
    await cluster.stop()
  }
  const shown = times.map((t) => (t === undefined ? "never" : `${fmt(t / 1000, 1)} s`)).join(", ")
  return [
    {
      fault: "every node of a 3+3 Redis Cluster killed for 3 s, then restarted (twice)",
      figure: `processing again ${shown} after the restart`,
      expectation: `≤ ${limitMs / 1000} s each time, with no restart of the worker or client`,
      pass: times.every((t) => t !== undefined && t <= limitMs)
    }
  ]
}
