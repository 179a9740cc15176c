/**
 * Issue 29, point 8: with Redis gone the dashboard says so in its own words, naming the address
 * (503 RedisUnavailable "Redis at 127.0.0.1:<port> is not answering …"), never the driver's
 * ("Reached the max retries per request limit …" or "Command timed out"); the page itself still
 * loads; an error reply from a Redis that answers is still shown as Redis worded it. A private
 * redis-server, frozen (SIGSTOP) and then killed mid-run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/index.js"
import { createClient } from "../../src/client.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"

let own: RedisServerHandle
let dash: DashboardServer
let timed: DashboardServer
const expected = () =>
  `Redis at 127.0.0.1:${own.port} is not answering (not reachable, or stalled); the dashboard tries again on the next request`

beforeAll(async () => {
  own = await startRedisServer()
  const client = createClient({ url: own.url })
  await client.enqueue("email:send", { to: "a@example.com" }, { queue: "default" })
  await client.close()
  dash = await serveDashboard({ redis: own.url, port: 0 })
  timed = await serveDashboard({ redis: { url: own.url, commandTimeoutMs: 500 }, port: 0 })
}, 30_000)
afterAll(async () => {
  own?.process.kill("SIGCONT")
  await dash?.close()
  await timed?.close()
  await own?.stop()
})

describe("the dashboard with Redis down", { timeout: 60_000 }, () => {
  it("a stalled Redis (SIGSTOP, reply past the command timeout): 503 with our message, then answers again once Redis does", async () => {
    expect((await fetch(`${timed.url}api/queues`)).status).toBe(200)
    own.process.kill("SIGSTOP")
    try {
      const res = await fetch(`${timed.url}api/queues`)
      expect(res.status).toBe(503)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({ error: { code: "RedisUnavailable", message: expected() } })
      expect(text).not.toMatch(/timed out/i)
    } finally {
      own.process.kill("SIGCONT")
    }
    const again = await fetch(`${timed.url}api/queues`)
    expect(again.status).toBe(200)
    expect(((await again.json()) as { queues: Array<{ queue: string }> }).queues.map((q) => q.queue)).toEqual([
      "default"
    ])
  })

  it("the API and /metrics answer 503 with our own message naming the address; the page still loads", async () => {
    expect((await fetch(`${dash.url}api/queues`)).status).toBe(200)
    await own.stop()
    for (const path of ["api/queues", "api/queues/default/pending_tasks", "api/redis_info", "metrics"]) {
      const res = await fetch(`${dash.url}${path}`)
      expect(res.status, path).toBe(503)
      const text = await res.text()
      expect(JSON.parse(text), path).toEqual({ error: { code: "RedisUnavailable", message: expected() } })
      expect(text).not.toMatch(/max retries|maxRetriesPerRequest|Connection is closed/i)
    }
    const page = await fetch(dash.url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("app.js")
  })

  it("an error reply from a Redis that answers is shown as Redis worded it (not as 'not answering')", async () => {
    await flushTestDb()
    const redis = rawClient()
    await redis.set("asynq:queues", "not a set")
    redis.disconnect()
    const answering = await serveDashboard({ redis: testRedisUrl(), port: 0 })
    try {
      const res = await fetch(`${answering.url}api/queues`)
      expect(res.status).toBe(503)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe("RedisError")
      expect(body.error.message).toContain("WRONGTYPE")
    } finally {
      await answering.close()
    }
  })
})
