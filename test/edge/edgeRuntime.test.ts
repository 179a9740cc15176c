/**
 * effect-asynq/edge in Vercel's Edge Runtime (@edge-runtime/vm: the runtime's globals, no Node
 * APIs), bundled as an edge function is (esbuild, platform neutral, edge-light condition), against
 * the loopback REST gateway in front of this file's redis-server database:
 * - the enqueue-only fixture writes the same bytes as the TCP client;
 * - examples/vercel: the edge route enqueues a task a long-lived Node worker (a real Server)
 *   processes; the cron route (vercel.json) refuses a call without CRON_SECRET and otherwise
 *   forwards a due scheduled task and recovers an expired lease.
 */
import { readFileSync } from "node:fs"
import { EdgeVM } from "@edge-runtime/vm"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createClient as createTcpClient } from "../../src/client.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startServer } from "../processor/support.js"
import { makeMsg, putActive, putInZset, zsetOf } from "../support/arrange.js"
import { bundleEdge } from "../support/edgeBundle.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { type RestGateway, startRestGateway } from "../support/restGateway.js"
import { waitFor } from "../support/waitFor.js"
import { parityCases, taskSnapshot } from "./parity.js"

let gateway: RestGateway
let raw: IORedis

beforeAll(async () => {
  gateway = await startRestGateway(testRedisUrl())
  raw = rawClient()
})
afterAll(async () => {
  await gateway?.close()
  raw?.disconnect()
})
beforeEach(() => flushTestDb())

interface EdgeAnswer {
  readonly status: number
  readonly body: string
}

/**
 * An Edge Runtime with the bundle of `entry` evaluated in it (its exports under `route`) and
 * `process.env` as Vercel provides it to edge functions. `call(expr)` evaluates an expression that
 * gives a Response inside the runtime and answers its status and body.
 */
const edgeRuntime = async (entry: string, env: Record<string, string>) => {
  const bundle = await bundleEdge(entry, { runtime: "edge-light", globalName: "route" })
  const vm = new EdgeVM({
    extend: (context) => Object.assign(context, { process: { env } })
  })
  vm.evaluate(bundle.code)
  return {
    bytes: bundle.bytes,
    call: async (expr: string): Promise<EdgeAnswer> => {
      const res = (await vm.evaluate(expr)) as Response
      return { status: res.status, body: await res.text() }
    }
  }
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  `new Request("http://edge${path}", { method: "POST", headers: ${JSON.stringify(headers)}, body: ${JSON.stringify(JSON.stringify(body))} })`

describe("the enqueue-only fixture in the Edge Runtime", () => {
  it("writes the same bytes as the TCP client, for every case", async () => {
    const edge = await edgeRuntime("test/edge/fixtures/enqueueWorker.ts", {})
    const env = JSON.stringify({ REST_URL: gateway.url, REST_TOKEN: gateway.token })
    for (const { name, payload, options } of parityCases) {
      await flushTestDb()
      const queue = (options.queue as string | undefined) ?? "default"
      const tcp = createTcpClient({ url: testRedisUrl() })
      await tcp.enqueue("parity:task", payload, { ...options, taskId: "same-id" }).finally(() => tcp.close())
      const viaTcp = await taskSnapshot(raw, queue, "same-id")
      await flushTestDb()
      const body =
        payload instanceof Uint8Array
          ? {
              type: "parity:task",
              payloadBase64: Buffer.from(payload).toString("base64"),
              options: { ...options, taskId: "same-id" }
            }
          : { type: "parity:task", payload, options: { ...options, taskId: "same-id" } }
      const answer = await edge.call(`route.handle(${post("/", body)}, ${env})`)
      expect({ name, status: answer.status }).toEqual({ name, status: 200 })
      expect({ name, state: await taskSnapshot(raw, queue, "same-id") }).toEqual({ name, state: viaTcp })
    }
  })
})

describe("examples/vercel in the Edge Runtime", () => {
  const env = () => ({
    UPSTASH_REDIS_REST_URL: gateway.url,
    UPSTASH_REDIS_REST_TOKEN: gateway.token,
    CRON_SECRET: "cron-secret"
  })

  it("vercel.json's cron calls the tick route", () => {
    const config = JSON.parse(readFileSync(new URL("../../examples/vercel/vercel.json", import.meta.url), "utf8")) as {
      crons: Array<{ path: string; schedule: string }>
    }
    expect(config.crons).toEqual([{ path: "/api/tick", schedule: "* * * * *" }])
    expect(readFileSync(new URL("../../examples/vercel/api/tick.ts", import.meta.url), "utf8")).toMatch(
      /export const config = \{ runtime: "edge" \}/
    )
  })

  it("the signup route enqueues (409 for a second signup while queued, 400 for bad input); the long-lived Node worker processes the task", async () => {
    const edge = await edgeRuntime("examples/vercel/api/signup.ts", env())
    const first = await edge.call(`route.default(${post("/api/signup", { email: "grace@example.com" })})`)
    expect(first.status).toBe(202)
    const { taskId } = JSON.parse(first.body) as { taskId: string }
    expect((await edge.call(`route.default(${post("/api/signup", { email: "grace@example.com" })})`)).status).toBe(409)
    expect((await edge.call(`route.default(${post("/api/signup", { email: 7 })})`)).status).toBe(400)
    const seen: Array<{ id: string; payload: string }> = []
    const server = await startServer(
      {
        "email:welcome": async (task) => {
          seen.push({ id: task.id, payload: new TextDecoder().decode(task.payload) })
        }
      },
      { queues: { email: 1 } },
      { url: testRedisUrl() }
    )
    try {
      await waitFor(
        "the Node worker to process the task",
        () => seen,
        (s) => s.length > 0
      )
      expect(seen).toEqual([{ id: taskId, payload: JSON.stringify({ email: "grace@example.com" }) }])
    } finally {
      await server.shutdown()
    }
  })

  it("the cron route bundles platform-neutral within 150 KB (issue 15), without the effect barrel", async () => {
    const bundle = await bundleEdge("examples/vercel/api/tick.ts", { runtime: "edge-light", globalName: "route" })
    expect(bundle.bytes).toBeLessThanOrEqual(150 * 1024)
    expect(bundle.scanned.filter((f) => /node_modules\/effect\/dist\/index\.js$|ioredis|node:/.test(f))).toEqual([])
    expect(bundle.code).toContain("-- forward:")
  })

  it("the cron route refuses a call without the secret, and otherwise forwards and recovers", async () => {
    const nowSec = Math.floor(Date.now() / 1000)
    await putInZset(raw, makeMsg("email", "due"), "scheduled", nowSec - 5)
    await putActive(raw, makeMsg("default", "stalled"), nowSec - 120)
    const edge = await edgeRuntime("examples/vercel/api/tick.ts", env())
    const refused = await edge.call(
      `route.default(new Request("http://edge/api/tick", { headers: { authorization: "Bearer guess" } }))`
    )
    expect(refused.status).toBe(401)
    expect(await raw.llen(queueKeys("email").pending)).toBe(0)
    const ran = await edge.call(
      `route.default(new Request("http://edge/api/tick", { headers: { authorization: "Bearer cron-secret" } }))`
    )
    expect(ran.status).toBe(200)
    expect(JSON.parse(ran.body)).toMatchObject({ forwarded: { moved: 1 }, recovered: { retried: 1 }, errors: [] })
    expect(await raw.lrange(queueKeys("email").pending, 0, -1)).toEqual(["due"])
    expect((await zsetOf(raw, queueKeys("default").retry)).map(([m]) => m)).toEqual(["stalled"])
  })
})
