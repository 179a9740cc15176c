/**
 * Worker processes killed: `effect-asynq worker` child processes (the tests' recording handlers:
 * every run of a task adds 1 to its field in `test:runs`, once even when the CLIENT KILL makes
 * ioredis send that write again; leases of 2 s, no grace) work through
 * 3,000 tasks while one is SIGKILLed three times (a new one started each time) and every
 * connection is killed twice (CLIENT KILL). At the end every task must have completed exactly once
 * as far as Redis is concerned, none lost, and the extra runs at most the tasks that were in flight
 * at the kills.
 */
import { createClient } from "../../src/client.js"
import { queueKeys } from "../../src/wire/keys.js"
import { spawnWorker, type WorkerProcess } from "../../test/worker/support.js"
import { startRedisServer } from "../../test/support/redis-server.js"
import type { ChaosRow } from "./report.js"
import { fmt, killClients, pollUntil, rawConnection, sleep, track } from "./support.js"

const tasks = 3000
const concurrency = 20
const queue = "chaos-kill"

export const workerKills = async (): Promise<ReadonlyArray<ChaosRow>> => {
  const server = await startRedisServer()
  track(server.stop)
  const raw = rawConnection(server.port)
  const workers: Array<WorkerProcess> = []
  const start = () => {
    const w = spawnWorker(server.url, ["--queues", `${queue}=1`, "--concurrency", String(concurrency)], {
      WORK_MS: "3"
    })
    workers.push(w)
    track(async () => void w.child.kill("SIGKILL"))
    return w
  }
  try {
    const client = createClient({ url: server.url })
    for (let i = 0; i < tasks; i += 500)
      await client.enqueueMany(
        Array.from({ length: Math.min(500, tasks - i) }, (_, j) => ({
          type: "test:job",
          payload: { n: i + j },
          options: { queue }
        }))
      )
    await client.close()
    const k = queueKeys(queue)
    const distinct = () => raw.hlen("test:runs")
    let inFlight = 0
    let w = start()
    for (let kill = 1; kill <= 3; kill++) {
      // Let it work through about a fifth of the tasks, then kill it mid-flight.
      const target = Math.round((tasks * kill) / 5)
      await pollUntil(distinct, (n) => n >= target, 60_000)
      if (kill === 2) {
        await killClients(raw)
        await sleep(200)
      }
      w.child.kill("SIGKILL")
      await w.exited
      inFlight += await raw.llen(k.active)
      w = start()
    }
    await pollUntil(distinct, (n) => n >= (tasks * 4) / 5, 60_000)
    await killClients(raw)
    const done = await pollUntil(
      async () => {
        const [p, a, r] = await Promise.all([raw.llen(k.pending), raw.llen(k.active), raw.zcard(k.retry)])
        return { queued: p + a + r, runs: await distinct() }
      },
      (s) => s.queued === 0 && s.runs === tasks,
      90_000,
      100
    )
    w.child.kill("SIGTERM")
    await w.exited
    const counts = Object.values(await raw.hgetall("test:runs")).map(Number)
    const totalRuns = counts.reduce((a, b) => a + b, 0)
    const ran = counts.length
    const succeeded = Number(await raw.get(k.processedTotal)) - Number(await raw.get(k.failedTotal))
    const archived = await raw.zcard(k.archived)
    const lost = tasks - ran + archived
    const duplicates = totalRuns - ran
    return [
      {
        fault: `worker SIGKILL x3 + CLIENT KILL x2 during ${fmt(tasks)} tasks (concurrency ${concurrency})`,
        figure: `${done ? "finished" : "NOT finished"}: ${fmt(ran)} tasks ran, ${lost} lost, ${archived} archived; ${duplicates} extra runs, ${inFlight} in flight at the kills; Redis counts ${fmt(succeeded)} successes`,
        expectation: "0 lost, extra runs ≤ tasks in flight at the kills, one success per task",
        pass: done !== undefined && lost === 0 && duplicates <= inFlight && succeeded === tasks
      }
    ]
  } finally {
    for (const x of workers) if (x.child.exitCode === null) x.child.kill("SIGKILL")
    raw.disconnect()
    await server.stop()
  }
}
