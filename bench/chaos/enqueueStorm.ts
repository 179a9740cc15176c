/**
 * Enqueue under CLIENT KILL storms: 50 callers on one client enqueue for a few seconds while every
 * normal connection is killed every 100 ms. Each call's payload names it (caller, sequence), so a
 * task written twice for one call is found by reading every task back. The promise: one call, at
 * most one task; a call that succeeded wrote its task.
 */
import { createClient } from "../../src/client.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startRedisServer } from "../../test/support/redis-server.js"
import type { ChaosRow } from "./report.js"
import { fmt, killClients, rawConnection, sleep, track } from "./support.js"

const callers = 50
const queue = "chaos-storm"

export const enqueueStorm = async (durationMs: number): Promise<ReadonlyArray<ChaosRow>> => {
  const server = await startRedisServer()
  track(server.stop)
  const raw = rawConnection(server.port)
  const client = createClient({ url: server.url })
  try {
    let calls = 0
    const succeeded = new Set<string>()
    let rejected = 0
    let kills = 0
    let running = true
    const caller = async (c: number) => {
      for (let i = 0; running; i++) {
        calls++
        try {
          await client.enqueue("chaos:storm", { c, i }, { queue })
          succeeded.add(`${c}/${i}`)
        } catch {
          rejected++
        }
      }
    }
    const killer = (async () => {
      while (running) {
        await sleep(100)
        await killClients(raw)
        kills++
      }
    })()
    const all = Array.from({ length: callers }, (_, c) => caller(c))
    await sleep(durationMs)
    running = false
    await Promise.all([...all, killer])

    // Read every task back: how many tasks each call wrote.
    const ids = await raw.lrange(queueKeys(queue).pending, 0, -1)
    const written = new Map<string, number>()
    for (let i = 0; i < ids.length; i += 1000) {
      const p = raw.pipeline()
      for (const id of ids.slice(i, i + 1000)) p.hgetBuffer(queueKeys(queue).task(id), "msg")
      for (const [, msg] of (await p.exec()) ?? []) {
        const payload = JSON.parse(new TextDecoder().decode(decodeTaskMessage(msg as Buffer).payload)) as {
          c: number
          i: number
        }
        const key = `${payload.c}/${payload.i}`
        written.set(key, (written.get(key) ?? 0) + 1)
      }
    }
    const twice = [...written.values()].filter((n) => n > 1).length
    const missing = [...succeeded].filter((k) => !written.has(k)).length
    const orphanWrites = [...written.keys()].filter((k) => !succeeded.has(k)).length
    return [
      {
        fault: `enqueue, ${callers} callers, CLIENT KILL every 100 ms (${fmt(durationMs / 1000)} s, ${kills} kills)`,
        figure: `${fmt(calls)} calls: ${fmt(succeeded.size)} ok, ${fmt(rejected)} rejected; ${fmt(ids.length)} tasks written; ${twice} calls wrote 2+ tasks; ${missing} ok calls without a task; ${orphanWrites} tasks of rejected calls`,
        expectation:
          "one call, at most one task: 0 calls with 2+ tasks, every ok call's task written, tasks written = ok calls + at most one per rejected call",
        pass: twice === 0 && missing === 0 && ids.length === written.size && orphanWrites <= rejected && calls > 0
      }
    ]
  } finally {
    await client.close().catch(() => {})
    raw.disconnect()
    await server.stop()
  }
}
