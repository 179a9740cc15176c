/**
 * The Redis service against real servers in each connection mode the library supports:
 * ACL username/password, TLS (rediss://) and Sentinel. Each test starts its own redis-server.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, describe, expect, it } from "vitest"
import { Redis } from "../../src/redis/Redis.js"
import { connectLightRedis } from "../../src/redis/lightRedis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { freePort, redisServerBinary, startRedisServer, type RedisServerHandle } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"

const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

const roundTrip = (options: RedisOptions) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const r = yield* Redis
      yield* r.use("set", (c) => c.set("mode-test", "ok"))
      return yield* r.use("get", (c) => c.get("mode-test"))
    }).pipe(Effect.provide(Redis.layer(options)))
  )

const connectError = (options: RedisOptions) =>
  Effect.runPromise(Redis.pipe(Effect.provide(Redis.layer({ connectTimeoutMs: 2000, ...options })), Effect.flip))

const kill = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve()
    p.once("exit", () => resolve())
    p.kill("SIGKILL")
  })

describe("Redis connection modes", () => {
  it("authenticates with an ACL username and password from the URL, and hides the password in errors", async () => {
    const server: RedisServerHandle = await startRedisServer()
    cleanups.push(server.stop)
    const admin = new IORedis(server.url)
    await admin.call("ACL", "SETUSER", "worker", "on", ">s3cret-pw", "~*", "&*", "+@all")
    await admin.call("ACL", "SETUSER", "default", "off")
    admin.disconnect()

    expect(await roundTrip({ url: `redis://worker:s3cret-pw@127.0.0.1:${server.port}` })).toBe("ok")
    expect(
      await roundTrip({ url: `redis://127.0.0.1:${server.port}`, username: "worker", password: "s3cret-pw" })
    ).toBe("ok")

    const err = await connectError({ url: `redis://worker:wrong-pw@127.0.0.1:${server.port}` })
    expect(err._tag).toBe("RedisConnectionError")
    expect(err.message).toMatch(/WRONGPASS|invalid username-password/i)
    expect(err.message).not.toContain("wrong-pw")
  })

  it("connects over TLS with rediss:// and a CA", async () => {
    const dir = mkdtempSync(join(tmpdir(), "effect-asynq-tls-"))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" })
    ssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "1",
      "-subj",
      "/CN=test-ca"
    )
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl(
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      "-days",
      "1",
      "-extfile",
      "ext.cnf"
    )

    const port = await freePort()
    const proc = spawn(
      redisServerBinary(),
      [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
        "--tls-cert-file",
        join(dir, "server.crt"),
        "--tls-key-file",
        join(dir, "server.key"),
        "--tls-ca-cert-file",
        join(dir, "ca.crt"),
        "--tls-auth-clients",
        "no"
      ],
      { stdio: "ignore" }
    )
    cleanups.push(() => kill(proc))
    const ca = readFileSync(join(dir, "ca.crt"))
    // the server needs a moment to listen; retry the connect until it answers
    const value = await waitFor(
      "the TLS server to answer",
      () => roundTrip({ url: `rediss://127.0.0.1:${port}`, tls: { ca }, connectTimeoutMs: 1000 }),
      (v) => v === "ok",
      { timeoutMs: 30_000 }
    )
    expect(value).toBe("ok")

    // Without the CA the server's certificate is not trusted: a clear connection error.
    const err = await connectError({ url: `rediss://127.0.0.1:${port}` })
    expect(err._tag).toBe("RedisConnectionError")
    expect(err.message).toContain(`rediss://127.0.0.1:${port}`)

    // The enqueue handler's light transport (its own RESP client over node:tls) too.
    const light = await Effect.runPromise(connectLightRedis({ url: `rediss://127.0.0.1:${port}`, tls: { ca } }))
    expect(await Effect.runPromise(light.command("get", ["GET", "mode-test"]))).toBe("ok")
    await light.quit()
    const lightErr = await Effect.runPromise(
      Effect.flip(connectLightRedis({ url: `rediss://127.0.0.1:${port}`, connectTimeoutMs: 2000 }))
    )
    expect(lightErr._tag).toBe("RedisConnectionError")
    expect(lightErr.message).toContain(`rediss://127.0.0.1:${port}`)
  })

  it("finds the master through Redis Sentinel", async () => {
    const master = await startRedisServer()
    cleanups.push(master.stop)
    const dir = mkdtempSync(join(tmpdir(), "effect-asynq-sentinel-"))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const port = await freePort()
    const conf = join(dir, "sentinel.conf")
    writeFileSync(
      conf,
      `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor testmaster 127.0.0.1 ${master.port} 1\n`
    )
    const proc = spawn(redisServerBinary(), [conf, "--sentinel"], { stdio: "ignore" })
    cleanups.push(() => kill(proc))

    const value = await waitFor(
      "the master through Sentinel to answer",
      () =>
        roundTrip({
          sentinel: { sentinels: [{ host: "127.0.0.1", port }], name: "testmaster" },
          connectTimeoutMs: 1000
        }),
      (v) => v === "ok",
      { timeoutMs: 30_000 }
    )
    expect(value).toBe("ok")
    const direct = new IORedis(master.url)
    expect(await direct.get("mode-test")).toBe("ok")
    direct.disconnect()
  })
})
