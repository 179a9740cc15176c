/**
 * A broken queue: its pending key holds a string (WRONGTYPE for every dequeue). A server serving it
 * and two healthy queues must run every healthy task once, with nothing archived or retried, just
 * as a server without the broken queue does (run first, as the reference).
 */
import { queueKeys } from "../../src/wire/keys.js"
import { startServer } from "../../test/processor/support.js"
import { startRedisServer } from "../../test/support/redis-server.js"
import type { ChaosRow } from "./report.js"
import { pollUntil, rawConnection, track } from "./support.js"

const perQueue = 300

const runOnce = async (url: string, raw: ReturnType<typeof rawConnection>, withBroken: boolean) => {
  const healthy = withBroken ? ["b-a", "b-b"] : ["r-a", "r-b"]
  const broken = withBroken ? "b-broken" : undefined
  if (broken) await raw.set(queueKeys(broken).pending, "not a list")
  const ran = new Map<string, number>()
  const queues: Record<string, number> = Object.fromEntries(
    [...healthy, ...(broken ? [broken] : [])].map((q) => [q, 1])
  )
  const srv = await startServer(
    async (task) => void ran.set(task.id, (ran.get(task.id) ?? 0) + 1),
    { queues, concurrency: 10, retryDelay: () => 0 },
    { url }
  )
  try {
    for (const q of healthy)
      for (let i = 0; i < perQueue; i++) await srv.enqueue("job", { i }, { queue: q, maxRetry: 0 })
    await pollUntil(
      async () => ran.size,
      (n) => n === perQueue * healthy.length,
      30_000
    )
  } finally {
    await srv.shutdown()
  }
  let archived = 0
  let retried = 0
  for (const q of healthy) {
    archived += await raw.zcard(queueKeys(q).archived)
    retried += await raw.zcard(queueKeys(q).retry)
  }
  const twice = [...ran.values()].filter((n) => n > 1).length
  return { ran: ran.size, archived, retried, twice }
}

export const brokenQueue = async (): Promise<ReadonlyArray<ChaosRow>> => {
  const server = await startRedisServer()
  track(server.stop)
  const raw = rawConnection(server.port)
  try {
    const reference = await runOnce(server.url, raw, false)
    const broken = await runOnce(server.url, raw, true)
    const want = perQueue * 2
    return [
      {
        fault: "a broken queue (pending key of the wrong type) next to 2 healthy ones",
        figure: `healthy tasks run: ${broken.ran}/${want} (without it: ${reference.ran}/${want}); archived ${broken.archived}, retried ${broken.retried}, run twice ${broken.twice}`,
        expectation: "the same as without the broken queue: every healthy task runs once, none archived or retried",
        pass:
          broken.ran === want &&
          reference.ran === want &&
          broken.archived === 0 &&
          broken.retried === 0 &&
          broken.twice === 0
      }
    ]
  } finally {
    raw.disconnect()
    await server.stop()
  }
}
