/**
 * `effect-asynq dash` as a shell user runs it: serves the page, asynqmon's /api/queues and
 * /metrics on 127.0.0.1; the token (flag or EFFECT_ASYNQ_DASH_TOKEN); read-only unless
 * --allow-actions; only its own hosts and each --allowed-host answered; exit 1 when Redis does not
 * answer; exit 2 on bad options (actions on 0.0.0.0 without a token, a malformed --allowed-host);
 * exit 0 on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient } from "../../src/client.js"
import { cliBundle } from "../support/cliBundle.js"
import { freePort } from "../support/redis-server.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { rawHttp } from "../dashboard/rawHttp.js"
import { runCli } from "./runCli.js"

const children: Array<ChildProcess> = []

/** Starts `effect-asynq dash …` and waits for the line with its URL. */
const startDash = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(
    process.execPath,
    [await cliBundle(), "dash", "--port", "0", "--redis-url", testRedisUrl(), ...args],
    {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  children.push(child)
  let out = ""
  child.stdout.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /effect-asynq dashboard: (http:\/\/\S+\/) /.exec(out)
      if (m) resolve(m[1]!)
    }
    child.stdout.on("data", check)
    void exited.then((code) => reject(new Error(`dash exited ${code} before serving: ${out}`)))
  })
  return { child, url, exited, output: () => out }
}

beforeAll(async () => {
  await flushTestDb()
  const client = createClient({ url: testRedisUrl() })
  await client.enqueue("email:send", { to: "a@example.com" }, { queue: "default" })
  await client.enqueue("email:send", { to: "b@example.com" }, { queue: "default", processIn: 60_000 })
  await client.close()
})
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
})

describe("effect-asynq dash", { timeout: 60_000 }, () => {
  it("serves / (HTML), /api/queues (asynqmon's shape) and /metrics on 127.0.0.1, read-only; SIGTERM stops it with exit 0", async () => {
    const dash = await startDash([])
    expect(dash.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(dash.output()).toContain("(read-only)")
    const page = await fetch(dash.url)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await page.text()).toContain("<!doctype html>")
    const queues = (await (await fetch(`${dash.url}api/queues`)).json()) as { queues: Array<Record<string, unknown>> }
    expect(queues.queues).toHaveLength(1)
    expect(queues.queues[0]).toMatchObject({ queue: "default", pending: 1, scheduled: 1, size: 2, paused: false })
    const metrics = await (await fetch(`${dash.url}metrics`)).text()
    expect(metrics).toContain('asynq_queue_size{queue="default"} 2\n')
    const pause = await fetch(`${dash.url}api/queues/default:pause`, { method: "POST" })
    expect(pause.status).toBe(403)
    dash.child.kill("SIGTERM")
    expect(await dash.exited).toBe(0)
  })

  it("with EFFECT_ASYNQ_DASH_TOKEN: 401 without it, 200 with Bearer; --allow-actions lets a pause through", async () => {
    const dash = await startDash(["--allow-actions"], { EFFECT_ASYNQ_DASH_TOKEN: "t0ken" })
    expect(dash.output()).toContain("(actions allowed, token required)")
    expect((await fetch(`${dash.url}api/queues`)).status).toBe(401)
    const auth = { authorization: "Bearer t0ken" }
    expect((await fetch(`${dash.url}api/queues`, { headers: auth })).status).toBe(200)
    expect((await fetch(`${dash.url}api/queues/default:pause`, { method: "POST", headers: auth })).status).toBe(204)
    const q = (await (await fetch(`${dash.url}api/queues/default`, { headers: auth })).json()) as {
      current: { paused: boolean }
    }
    expect(q.current.paused).toBe(true)
    expect((await fetch(`${dash.url}api/queues/default:resume`, { method: "POST", headers: auth })).status).toBe(204)
    dash.child.kill("SIGINT")
    expect(await dash.exited).toBe(0)
  })

  it("exits 1 at once when Redis does not answer, and 2 on a bad --port or an empty token", async () => {
    const dead = await runCli(["dash", "--port", "0", "--redis-url", `redis://127.0.0.1:${await freePort()}`])
    expect(dead.code).toBe(1)
    expect(dead.stderr).toContain("cannot connect to Redis")
    const badPort = await runCli(["dash", "--port", "70000", "--redis-url", testRedisUrl()])
    expect(badPort.code).toBe(2)
    expect(badPort.stderr).toContain("--port must be 0..65535")
    const empty = await runCli(["dash", "--port", "0", "--redis-url", testRedisUrl(), "--token", " "])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain("the token is empty")
  })

  it("answers only its own hosts and each --allowed-host: a request for attacker.example gets 421", async () => {
    const dash = await startDash(["--allowed-host", "dash.example.com", "--allowed-host", "OPS.example.com"])
    const port = Number(new URL(dash.url).port)
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `dash.example.com:${port}`, "ops.example.com"])
      expect((await rawHttp(port, host, "/api/queues")).status, host).toBe(200)
    const refused = await rawHttp(port, `attacker.example:${port}`, "/api/queues")
    expect(refused.status).toBe(421)
    expect(JSON.parse(refused.body).error.message).toContain("--allowed-host attacker.example")
    expect((await rawHttp(port, `attacker.example:${port}`, "/")).status).toBe(421)
    dash.child.kill("SIGTERM")
    expect(await dash.exited).toBe(0)
  })

  it("exits 2 before serving on a malformed --allowed-host, or --allow-actions on 0.0.0.0 without a token", async () => {
    const badHost = await runCli([
      "dash",
      "--port",
      "0",
      "--redis-url",
      testRedisUrl(),
      "--allowed-host",
      "https://dash.example.com"
    ])
    expect(badHost.code).toBe(2)
    expect(badHost.stderr).toContain('--allowed-host: allowed host "https://dash.example.com" has a scheme or a path')
    const open = await runCli(
      ["dash", "--port", "0", "--redis-url", testRedisUrl(), "--host", "0.0.0.0", "--allow-actions"],
      { EFFECT_ASYNQ_DASH_TOKEN: undefined }
    )
    expect(open.code).toBe(2)
    expect(open.stderr).toContain("actions are allowed on 0.0.0.0, which other machines can reach, without a token")
  })
})
