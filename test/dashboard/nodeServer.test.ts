/**
 * The node:http bridge of serveDashboard over real HTTP: request bodies reach the handler (a batch
 * action), Set-Cookie headers come through, HEAD has no body, an oversize body is refused (413),
 * a malformed %-escape is a 400, and close() stops listening.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/index.js"
import { createClient } from "../../src/client.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"

let server: DashboardServer
const ids: Array<string> = []

beforeAll(async () => {
  await flushTestDb()
  const client = createClient({ url: testRedisUrl() })
  for (let i = 0; i < 3; i++)
    ids.push((await client.enqueue("later", { i }, { queue: "default", processIn: 600_000 })).id)
  await client.close()
  server = await serveDashboard({ redis: testRedisUrl(), port: 0, allowActions: true, token: "tk" })
})
afterAll(() => server?.close())

const auth = { authorization: "Bearer tk" }

describe("serveDashboard (node:http)", () => {
  it("listens on 127.0.0.1 and passes a JSON body through: batch_delete deletes the ids it names", async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`)
    const res = await fetch(`${server.url}api/queues/default/scheduled_tasks:batch_delete`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ task_ids: [ids[0], "missing"] })
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ deleted_ids: [ids[0]], failed_ids: ["missing"] })
    const left = (await (await fetch(`${server.url}api/queues/default/scheduled_tasks`, { headers: auth })).json()) as {
      tasks: Array<{ id: string }>
    }
    expect(left.tasks.map((t) => t.id).sort()).toEqual([ids[1], ids[2]].sort())
  })

  it("sends Set-Cookie through, answers HEAD without a body, refuses a body over 1 MB (413) and a malformed escape (400)", async () => {
    const visit = await fetch(`${server.url}?token=tk`, { redirect: "manual" })
    expect(visit.status).toBe(303)
    expect(visit.headers.getSetCookie()).toHaveLength(1)
    const head = await fetch(`${server.url}api/queues`, { method: "HEAD", headers: auth })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
    const big = await fetch(`${server.url}api/queues/default/scheduled_tasks:batch_delete`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ task_ids: ["x".repeat(1_100_000)] })
    })
    expect(big.status).toBe(413)
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe("PayloadTooLarge")
    const bad = await fetch(`${server.url}api/queues/%E0%A4%A/pending_tasks`, { headers: auth })
    expect(bad.status).toBe(400)
  })

  it("close() stops listening (and is safe to call twice)", async () => {
    const s = await serveDashboard({ redis: testRedisUrl(), port: 0 })
    expect((await fetch(`${s.url}api/queues`)).status).toBe(200)
    await s.close()
    await s.close()
    await expect(fetch(`${s.url}api/queues`)).rejects.toThrow()
  })
})
