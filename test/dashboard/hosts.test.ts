/**
 * Issue 29, point 2: the dashboard answers only the hosts that are its own, so DNS rebinding (a page
 * on attacker.example re-pointed at 127.0.0.1) cannot read or drive it. Raw HTTP requests, as curl
 * sends them, to the real Node server (serveDashboard) with a chosen Host header: the pages, assets,
 * the API, /metrics and an action, read-only and with actions; localhost, IP addresses and
 * configured names are answered; bad allowedHosts and actions on a non-loopback address without a
 * token are refused up front.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/index.js"
import { createClient } from "../../src/client.js"
import { createInspector } from "../../src/inspector/promise.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { rawHttp as raw } from "./rawHttp.js"

const inspector = createInspector({ url: testRedisUrl() })
let readOnly: DashboardServer
let withActions: DashboardServer
let configured: DashboardServer
let proxied: DashboardServer
let taskId: string

beforeAll(async () => {
  await flushTestDb()
  const client = createClient({ url: testRedisUrl() })
  taskId = (await client.enqueue("email:send", { to: "secret-recipient@example.com" }, { queue: "default" })).id
  await client.close()
  readOnly = await serveDashboard({ redis: testRedisUrl(), port: 0 })
  withActions = await serveDashboard({ redis: testRedisUrl(), port: 0, allowActions: true })
  configured = await serveDashboard({ redis: testRedisUrl(), port: 0, allowedHosts: ["dash.example.com", "::1"] })
  proxied = await serveDashboard({
    redis: testRedisUrl(),
    port: 0,
    allowActions: true,
    allowedHosts: ["dash.example.com", "origin.internal"]
  })
})
afterAll(async () => {
  await readOnly?.close()
  await withActions?.close()
  await configured?.close()
  await proxied?.close()
  await inspector.close()
})

const readPaths = [
  "/",
  "/assets/app.js",
  "/api/queues",
  `/api/queues/default/tasks/${"x"}`,
  "/api/queues/default/pending_tasks",
  "/api/redis_info",
  "/metrics"
]

describe("the dashboard's Host check (DNS rebinding)", () => {
  it("read-only: a request for attacker.example is refused (421, one-line reason) on every page, asset and API route, and leaks nothing", async () => {
    for (const path of [...readPaths, `/api/queues/default/tasks/${taskId}`]) {
      const r = await raw(readOnly.port, `attacker.example:${readOnly.port}`, path)
      expect(r.status, path).toBe(421)
      const body = JSON.parse(r.body) as { error: { code: string; message: string } }
      expect(body.error.code).toBe("HostNotAllowed")
      expect(body.error.message).toBe(
        'this dashboard does not answer to the host "attacker.example" (a guard against DNS rebinding); if that name is yours, allow it with --allowed-host attacker.example (allowedHosts in code)'
      )
      expect(r.body).not.toContain("secret-recipient")
      expect(r.body).not.toContain("redis_version")
    }
    // The same requests for this machine's own names and addresses are answered.
    for (const host of [
      `127.0.0.1:${readOnly.port}`,
      `localhost:${readOnly.port}`,
      `[::1]:${readOnly.port}`,
      "LocalHost.",
      "127.0.0.1"
    ]) {
      const r = await raw(readOnly.port, host, `/api/queues/default/tasks/${taskId}`)
      expect(r.status, host).toBe(200)
      expect(r.body).toContain("secret-recipient")
    }
    expect((await raw(readOnly.port, `localhost:${readOnly.port}`, "/")).status).toBe(200)
  })

  it("with --allow-actions and no token: a pause sent for attacker.example is refused and the queue stays running; sent for 127.0.0.1 it works", async () => {
    const refused = await raw(
      withActions.port,
      `attacker.example:${withActions.port}`,
      "/api/queues/default:pause",
      "POST"
    )
    expect(refused.status).toBe(421)
    expect((await inspector.getQueueInfo("default")).paused).toBe(false)
    for (const path of readPaths)
      expect((await raw(withActions.port, `attacker.example:${withActions.port}`, path)).status, path).toBe(421)
    const paused = await raw(withActions.port, `127.0.0.1:${withActions.port}`, "/api/queues/default:pause", "POST")
    expect(paused.status).toBe(204)
    expect((await inspector.getQueueInfo("default")).paused).toBe(true)
    expect(
      (await raw(withActions.port, `localhost:${withActions.port}`, "/api/queues/default:resume", "POST")).status
    ).toBe(204)
    expect((await inspector.getQueueInfo("default")).paused).toBe(false)
  })

  it("a configured host is answered (any case, trailing dot, any port); other names, look-alikes and malformed Hosts are not", async () => {
    for (const host of [`dash.example.com:${configured.port}`, "DASH.example.com", "dash.example.com.:443", "[::1]"])
      expect((await raw(configured.port, host, "/api/queues")).status, host).toBe(200)
    for (const host of [
      "attacker.example",
      "dash.example.com.attacker.example",
      "evil-dash.example.com",
      "localhost.attacker.example",
      "127.0.0.1.nip.io",
      "a b",
      "user@127.0.0.1"
    ])
      expect((await raw(configured.port, host, "/api/queues")).status, host).toBe(421)
  })

  it("behind a proxy that passes its origin's name in Host, an action from a page on a configured name is taken; from any other Origin it is refused", async () => {
    const pause = (origin: string) =>
      raw(proxied.port, "origin.internal", "/api/queues/default:pause", "POST", { origin })
    for (const origin of [
      "https://evil.example",
      "https://dash.example.com.evil.example",
      "http://localhost:3000",
      "http://127.0.0.1",
      "null"
    ]) {
      const r = await pause(origin)
      expect(r.status, origin).toBe(403)
      expect(JSON.parse(r.body).error.code).toBe("CrossSiteRequest")
    }
    expect((await inspector.getQueueInfo("default")).paused).toBe(false)
    expect((await pause("https://DASH.example.com")).status).toBe(204)
    expect((await inspector.getQueueInfo("default")).paused).toBe(true)
    const resume = await raw(proxied.port, "origin.internal", "/api/queues/default:resume", "POST", {
      origin: "https://dash.example.com:8443"
    })
    expect(resume.status).toBe(204)
    expect((await inspector.getQueueInfo("default")).paused).toBe(false)
  })

  it("serveDashboard refuses a malformed allowed host, saying which and why", async () => {
    const bad: Array<[string, string]> = [
      ["https://dash.example.com", "has a scheme or a path"],
      ["dash.example.com/x", "has a scheme or a path"],
      ["dash.example.com:8080", "has a port"],
      ["*.example.com", "has a wildcard"],
      [" ", "is empty"],
      ["dash example", "is not a valid host name"]
    ]
    for (const [host, why] of bad) {
      const attempt = serveDashboard({ redis: testRedisUrl(), port: 0, allowedHosts: [host] })
      await expect(attempt, host).rejects.toMatchObject({ _tag: "InvalidArgument", field: "allowedHosts" })
      await expect(attempt, host).rejects.toThrow(`allowed host ${JSON.stringify(host)} ${why}`)
    }
  })

  it("actions on an address other machines reach need a token: refused without one, served with one; read-only needs none", async () => {
    await expect(
      serveDashboard({ redis: testRedisUrl(), port: 0, host: "0.0.0.0", allowActions: true })
    ).rejects.toMatchObject({
      _tag: "InvalidArgument",
      field: "token",
      message: expect.stringContaining(
        "actions are allowed on 0.0.0.0, which other machines can reach, without a token"
      )
    })
    const withToken = await serveDashboard({
      redis: testRedisUrl(),
      port: 0,
      host: "0.0.0.0",
      allowActions: true,
      token: "tk"
    })
    const open = await serveDashboard({ redis: testRedisUrl(), port: 0, host: "0.0.0.0" })
    try {
      expect(
        (await raw(withToken.port, `127.0.0.1:${withToken.port}`, "/api/queues", "GET", { authorization: "Bearer tk" }))
          .status
      ).toBe(200)
      expect(
        (
          await raw(withToken.port, `attacker.example:${withToken.port}`, "/api/queues", "GET", {
            authorization: "Bearer tk"
          })
        ).status
      ).toBe(421)
      expect((await raw(open.port, `127.0.0.1:${open.port}`, "/api/queues")).status).toBe(200)
      expect((await raw(open.port, `attacker.example:${open.port}`, "/api/queues")).status).toBe(421)
    } finally {
      await withToken.close()
      await open.close()
    }
  })
})
